-- Takes a read hold of the lock K (lib/readers.lua), or one step of a
-- blocking acquireRead: take it when no writer holds K and none waits
-- ahead, join (or stay in) K's queue, or give up. A caller whose write
-- hold is K (its token) turns it into a read hold (demotion).
-- KEYS[1] = readers (K~~r), KEYS[2] = queue (K~~q), KEYS[3] = lock (K)
-- ARGV[1] = token, ARGV[2] = now (ms since the Unix epoch, the caller's
-- clock), ARGV[3] = lease ms, ARGV[4] = '0' a plain try, '1' a waiter's
-- step, '2' a waiter giving up, ARGV[5] = mark's life ms, ARGV[6] = when
-- the waiter began to wait (µs, its clock), ARGV[7] = grace ms
-- Returns {1} when the read hold is ours, {0, ms} while a writer holds K
-- or waits ahead (ms: K's PTTL), {2} after giving up, {3} when only
-- departed waiters were looked at, with more behind them (step again).
local readers, queue, lock = KEYS[1], KEYS[2], KEYS[3]
local token, now, ttl = ARGV[1], tonumber(ARGV[2]), tonumber(ARGV[3])
local mode, grace = ARGV[4], tonumber(ARGV[7])
local MARK = '~~read'
local LONE = '~~read:'
-- K of another type (another client's lock on this name: Symfony's
-- RedisStore keeps a sorted set) is held by a writer not of ours; it reads
-- as "~~read~other", which no token equals (none starts with "~~read") and
-- which is neither the read mark nor a lone reader.
local held = redis.pcall('GET', lock)
if type(held) == 'table' then
  held = '~~read~other'
end

-- Fast path: K is free, so no hand-over is on its way to a waiter (a
-- writer's plain SET NX takes it alike). A lone reader is written into K
-- itself, "~~read:<token>:<end of its lease>" (ms since the Unix epoch by
-- its clock, as its score in K~~r would be), with K's expiry its lease:
-- no K~~r, and its release is a writer's (GET, EXISTS, DEL). A plain try
-- replayed after a lost reply finds K its own and sets the lease again.
local mine = LONE .. token .. ':'
if mode == '0' and (not held or string.sub(held, 1, #mine) == mine) then
  redis.call('SET', lock, mine .. string.format('%d', now + ttl), 'PX', ttl)
  return {1}
end
-- A reader alone in K (we may be it, in a waiter's step): it joins K~~r
-- with the lease end it wrote (its clock, not ours), and K holds the read
-- mark with the same expiry.
local lone, ends = string.match(held or '', '^~~read:([^:]*):(%d+)$')
if lone then
  local left = redis.call('PTTL', lock)
  redis.call('ZADD', readers, ends, lone)
  redis.call('PEXPIRE', readers, left + grace + 1000)
  redis.call('SET', lock, MARK, 'PX', left)
  held = MARK
end

local function won()
  redis.call('ZADD', readers, now + ttl, token)
  local life = ttl + grace + 1000
  if redis.call('PTTL', readers) < life then
    redis.call('PEXPIRE', readers, life)
  end
  if held ~= MARK then
    redis.call('SET', lock, MARK, 'PX', ttl)
  elseif redis.call('PTTL', lock) < ttl then
    redis.call('PEXPIRE', lock, ttl)
  end
  return {1}
end

-- No writer and nobody waiting: we join the readers.
if mode == '0' and (not held or held == MARK) and redis.call('EXISTS', queue) == 0 then
  return won()
end
-- @include queue
-- @include readers

-- Ours: leave the queue and let the next waiting reader in.
local function entered()
  won()
  leave_queue(lock, queue, token)
  wake_next_reader(lock, queue)
  return {1}
end

-- Our own write hold (demotion), or, on a replay, our first try's entry.
if held == token or (held == MARK and redis.call('ZSCORE', readers, token)) then
  return entered()
end
if mode == '2' then
  leave_queue(lock, queue, token)
  return {2}
end
if not held or held == MARK then
  -- No writer holds it: readers enter unless a writer waits ahead.
  local head, mark, more = first_live(lock, queue)
  if more then
    return {3}
  end
  if not head or head == token or is_reader(mark) then
    return entered()
  end
end
if mode == '1' then
  join_queue(lock, queue, token, ARGV[6], ttl .. ':r:0', tonumber(ARGV[5]))
end
return {0, redis.call('PTTL', lock)}

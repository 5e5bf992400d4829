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
local held = redis.call('GET', lock)

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

-- Fast path: no writer and nobody waiting.
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

-- Takes a semaphore's permits (lib/semaphore.lua), or one step of a
-- blocking acquire: claim permits a release handed to us, take free ones,
-- join (or stay in) the queue, or give up.
-- KEYS[1] = holders (S~~s), KEYS[2] = queue (S~~s~~q)
-- ARGV[1] = token, ARGV[2] = permits, ARGV[3] = now (ms since the Unix
-- epoch, the caller's clock), ARGV[4] = lease ms, ARGV[5] = '0' a plain try,
-- '1' a waiter's step, '2' a waiter giving up, ARGV[6] = mark's life ms,
-- ARGV[7] = when the waiter began to wait (µs, its clock), ARGV[8] = grace
-- ms (allowed clock difference), ARGV[9] = how many permits, ARGV[10] =
-- '1' on a replay (the first try's reply was lost), ARGV[11] = '1' on a
-- wait's first step under a fresh token (never queued, so nothing was
-- handed to it, and it has no queue entry to leave)
-- Returns {1} when the permits are ours, {1, ms} when they were ours
-- already (handed to us by a release, or our first try's on a replay) and
-- had ms left by our clock (they count only if the reply comes within
-- that), {0, ms} while not enough are free (ms: until the first live lease
-- may end, -1: unknown), {2} after giving up, {-1, permits} when the
-- semaphore has another number of permits while anyone holds or waits, {3}
-- when departed waiters stood in the way of deciding (call again).
local holders, queue = KEYS[1], KEYS[2]
local token, permits, now, ttl = ARGV[1], tonumber(ARGV[2]), tonumber(ARGV[3]), tonumber(ARGV[4])
local mode, grace, count = ARGV[5], tonumber(ARGV[8]), tonumber(ARGV[9])
local replay, fresh = ARGV[10] == '1', ARGV[11] == '1' and ARGV[10] ~= '1'
local dead_at = now - grace
local life = ttl + grace + 1000

-- Our permits as members of S~~s, each with `score`: the token, then
-- token#2 ... token#count.
local function units(score)
  local args = {score, token}
  for i = 2, count do
    args[#args + 1] = score
    args[#args + 1] = token .. '#' .. i
  end
  return args
end

-- Our permits' members alone.
local function members()
  local names = {token}
  for i = 2, count do
    names[#names + 1] = token .. '#' .. i
  end
  return names
end

-- Whether this step may have a queue entry to leave: a waiter's step that
-- is not the first under a fresh token.
local queued = mode ~= '0' and not fresh

-- Takes our permits for the whole lease (others hold too, or nobody: see
-- won()).
local function claim()
  redis.call('ZADD', holders, unpack(units(now + ttl)))
  if redis.call('PTTL', holders) < life then
    redis.call('PEXPIRE', holders, life)
  end
end

-- Handed to us by a release (or, on a replay, taken by our first try):
-- ours while its lease lasts by our clock. Once it ended, others may have
-- counted it gone and given its permits away (a call drops at most SCAN
-- ended holders, so it may still be here): dropped, and we go on as any
-- caller. Our clock is as old as this request, which may have been held
-- up in flight: the caller counts the permits only if the reply comes
-- before the lease left here ends. (A plain try's fresh token is nowhere
-- yet: not looked for, nor a wait's first step's.) Permits of ours are
-- never queued as well: a release's grant took us out of the queue (and
-- left our mark and wake-up list to us), and a step that won left it.
if queued or replay then
  local mine = tonumber(redis.call('ZSCORE', holders, token))
  if mine and mine > now then
    claim()
    if queued then
      redis.call('DEL', holders .. '~~a~' .. token, holders .. '~~w~' .. token)
    end
    return {1, mine - now}
  elseif mine then
    redis.call('ZREM', holders, unpack(members()))
  end
end

local live = redis.call('ZCOUNT', holders, '(' .. dead_at, '+inf')
local free = permits - live
-- Whether anyone waits matters only while permits are free (to serve
-- waiters first, or take them at once when nobody waits): with none
-- free, nobody is served now and we join or stay in the queue.
local waiting = free > 0 and redis.call('EXISTS', queue) or 1

local function won()
  if live == 0 then
    -- Nobody else holds: the number of permits is ours to set (N is kept
    -- as the member ~~n, scored -N: never counted live), and no lease of
    -- another holder is kept by the key's expiry.
    local args = units(now + ttl)
    args[#args + 1] = -permits
    args[#args + 1] = '~~n'
    redis.call('ZADD', holders, unpack(args))
    redis.call('PEXPIRE', holders, life)
  else
    claim()
  end
  -- Leaves the queue, if we may be in it (not on a plain try, nor on a
  -- wait's first step under a fresh token).
  if queued then
    redis.call('ZREM', queue, token)
    redis.call('DEL', holders .. '~~a~' .. token, holders .. '~~w~' .. token)
  end
  return {1}
end

-- Users disagree only while someone holds or waits: once every holder's
-- lease ended and nobody waits, the number is the next user's.
if live > 0 or waiting == 1 then
  local stored = tonumber(redis.call('ZSCORE', holders, '~~n'))
  if stored and -stored ~= permits then
    return {-1, -stored}
  end
end
-- Fast path: enough permits are free and nobody waits for any (a plain
-- try, or a wait's first step: it joins the queue only if they are not).
if mode ~= '2' and waiting == 0 and not replay and (mode == '0' or live + count <= permits) then
  if live + count <= permits then
    -- One acquire in 16 (its random token ends in 0) drops up to 8 ended
    -- leases: holders that died without a release do not pile up in S~~s
    -- while the semaphore is never full (a call off this path drops them
    -- too: drop_ended). Ended leases are never counted, so this is only
    -- about memory.
    if string.sub(token, -1) == '0' then
      local dead = redis.call('ZRANGEBYSCORE', holders, '(0', dead_at, 'LIMIT', 0, 8)
      if #dead > 0 then
        redis.call('ZREM', holders, unpack(dead))
      end
    end
    return won()
  end
  local first = redis.call('ZRANGEBYSCORE', holders, '(' .. dead_at, '+inf', 'WITHSCORES',
    'LIMIT', 0, 1)
  return {0, first[2] and (tonumber(first[2]) - now + grace) or -1}
end
-- @include queue
-- @include semaphore
if mode == '2' then
  leave_queue(holders, queue, token)
  return {2}
end
-- Waiters first, in order; we may be one of them. (Ended leases are never
-- counted live, so dropping some leaves `free` as it is.)
drop_ended(holders, dead_at, token)
local more, blocked, served
free, more, blocked, served = grant(holders, holders, queue, now, free, grace, token)
if served then
  return won()
end
if more then
  return {3}
end
if not blocked and free >= count then
  return won()
end
local first = redis.call('ZRANGEBYSCORE', holders, '(' .. dead_at, '+inf', 'WITHSCORES',
  'LIMIT', 0, 1)
local hint = first[2] and (tonumber(first[2]) - now + grace) or -1
if mode == '1' then
  local alive = tonumber(ARGV[6])
  -- The mark: "<ttl>:0:0:<permits asked>:<its end, by our clock>".
  join_queue(holders, queue, token, ARGV[7],
    ttl .. ':0:0:' .. count .. ':' .. string.format('%d', now + alive), alive)
  -- N stays while someone waits: S~~s lives at least as long as the
  -- mark. A live lease that ends after the mark does (by any caller's
  -- clock, within the grace) keeps it so already: every claim made S~~s
  -- live a second beyond its lease and grace.
  if not (first[2] and tonumber(first[2]) - now >= alive + grace)
    and redis.call('PTTL', holders) < alive + 1000 then
    redis.call('ZADD', holders, -permits, '~~n')
    redis.call('PEXPIRE', holders, alive + 1000)
  end
end
return {0, hint}

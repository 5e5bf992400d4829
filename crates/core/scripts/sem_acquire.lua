-- Takes a permit of a semaphore (lib/semaphore.lua), or one step of a
-- blocking acquire: claim a permit a release handed to us, take a free
-- one, join (or stay in) the queue, or give up.
-- KEYS[1] = holders (S~~s), KEYS[2] = queue (S~~s~~q), KEYS[3] = permits
-- (S~~s~~n)
-- ARGV[1] = token, ARGV[2] = permits, ARGV[3] = now (ms since the Unix
-- epoch, the caller's clock), ARGV[4] = lease ms, ARGV[5] = '0' a plain try,
-- '1' a waiter's step, '2' a waiter giving up, ARGV[6] = mark's life ms,
-- ARGV[7] = when the waiter began to wait (µs, its clock), ARGV[8] = grace
-- ms (allowed clock difference)
-- Returns {1} when a permit is ours, {1, ms} when it was ours already
-- (handed to us by a release, or our first try's on a replay) and had ms
-- left by our clock (it counts only if the reply comes within that), {0,
-- ms} while none is free (ms: until the first live lease may end, -1:
-- unknown), {2} after giving up, {-1, permits} when the semaphore has
-- another number of permits while anyone holds or waits, {3} when departed waiters stood in the way of
-- deciding (call again).
local holders, queue, permits_key = KEYS[1], KEYS[2], KEYS[3]
local token, permits, now, ttl = ARGV[1], tonumber(ARGV[2]), tonumber(ARGV[3]), tonumber(ARGV[4])
local mode, grace = ARGV[5], tonumber(ARGV[8])
local stored = redis.call('GET', permits_key)
if stored and tonumber(stored) ~= permits then
  -- Users disagree only while someone holds or waits: once every holder's
  -- lease ended (up to 8 ended ones dropped here) and nobody waits, the
  -- number is the next user's (won() sets it).
  local ended = redis.call('ZRANGEBYSCORE', holders, '-inf', now - grace, 'LIMIT', 0, 8)
  if #ended > 0 then
    redis.call('ZREM', holders, unpack(ended))
  end
  if redis.call('ZCOUNT', holders, '(' .. (now - grace), '+inf') > 0
      or redis.call('EXISTS', queue) == 1 then
    return {-1, tonumber(stored)}
  end
end
local life = ttl + grace + 1000

local function won()
  redis.call('ZADD', holders, now + ttl, token)
  if redis.call('PTTL', holders) < life then
    redis.call('PEXPIRE', holders, life)
  end
  if redis.call('PTTL', permits_key) < life then
    redis.call('SET', permits_key, permits, 'PX', life)
  end
  if mode ~= '0' then
    redis.call('ZREM', queue, token)
    redis.call('DEL', holders .. '~~a~' .. token, holders .. '~~w~' .. token)
  end
  return {1}
end

-- Handed to us by a release (or, on a replay, taken by our first try):
-- ours while its lease lasts by our clock. Once it ended, others may have
-- counted it gone and given its permit away (a call drops at most SCAN
-- ended holders, so it may still be here): dropped, and we go on as any
-- caller. Our clock is as old as this request, which may have been held
-- up in flight: the caller counts the permit only if the reply comes
-- before the lease left here ends.
local mine = tonumber(redis.call('ZSCORE', holders, token))
if mine and mine > now then
  won()
  return {1, mine - now}
elseif mine then
  redis.call('ZREM', holders, token)
end
-- Drop up to 8 holders whose lease ended; count the live ones.
local dead_at = now - grace
local dead = redis.call('ZRANGEBYSCORE', holders, '-inf', dead_at, 'LIMIT', 0, 8)
if #dead > 0 then
  redis.call('ZREM', holders, unpack(dead))
end
local free = permits - redis.call('ZCOUNT', holders, '(' .. dead_at, '+inf')
-- Fast path: a permit is free and nobody waits for one.
if mode == '0' and free > 0 and redis.call('EXISTS', queue) == 0 then
  return won()
end
-- @include queue
-- @include semaphore
if mode == '2' then
  leave_queue(holders, queue, token)
  return {2}
end
-- Waiters first, in order; we may be one of them.
local more
free, more = grant(holders, holders, queue, now, free, grace)
if redis.call('ZSCORE', holders, token) then
  return won()
end
if more then
  return {3}
end
if free > 0 then
  return won()
end
local first = redis.call('ZRANGEBYSCORE', holders, '(' .. dead_at, '+inf', 'WITHSCORES',
  'LIMIT', 0, 1)
local hint = first[2] and (tonumber(first[2]) - now + grace) or -1
if mode == '1' then
  local alive = tonumber(ARGV[6])
  join_queue(holders, queue, token, ARGV[7], ttl .. ':0:0', alive)
  if redis.call('PTTL', permits_key) < alive + 1000 then
    redis.call('SET', permits_key, permits, 'PX', alive + 1000)
  end
end
return {0, hint}

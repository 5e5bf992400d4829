-- Gives a permit of a semaphore back (lib/semaphore.lua): removes our
-- holder entry and, when others wait, hands the freed permits to the first
-- live waiters. With ARGV[4] = '1' (an acquire whose outcome is unknown, or
-- a wait that PHP ended) the token also leaves the queue.
-- KEYS[1] = holders, KEYS[2] = queue, KEYS[3] = permits
-- ARGV[1] = token, ARGV[2] = now (ms since the Unix epoch, the caller's
-- clock), ARGV[3] = grace ms, ARGV[4] = '1' to abandon
-- Returns 1 when the token held a permit and gave it back, 0 otherwise; 2
-- more (2 or 3) when departed waiters stood in the way of handing the
-- freed permits over: the caller sends the same call again (a call that
-- holds nothing still hands free permits to the waiters).
local holders, queue, permits_key = KEYS[1], KEYS[2], KEYS[3]
local token, now, grace = ARGV[1], tonumber(ARGV[2]), tonumber(ARGV[3])
local held = redis.call('ZREM', holders, token)
if ARGV[4] ~= '1' and held == 0 and redis.call('EXISTS', queue) == 0 then
  return 0
end
if redis.call('EXISTS', queue) == 0 then
  if redis.call('EXISTS', holders) == 0 then
    redis.call('DEL', permits_key)
  end
  return held
end
-- @include queue
-- @include semaphore
leave_queue(holders, queue, token)
local permits = tonumber(redis.call('GET', permits_key))
if permits then
  local _, more = grant(holders, holders, queue, now, free_permits(holders, permits, now - grace), grace)
  if more then
    return held + 2
  end
end
return held

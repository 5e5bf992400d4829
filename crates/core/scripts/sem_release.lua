-- Gives a holder's permits of a semaphore back (lib/semaphore.lua): removes
-- them and, when others wait, hands the freed permits to the first
-- waiters. With ARGV[4] = '1' (an acquire whose outcome is unknown, or a
-- wait that PHP ended) the token also leaves the queue.
-- KEYS[1] = holders, KEYS[2] = queue
-- ARGV[1] = token, ARGV[2] = now (ms since the Unix epoch, the caller's
-- clock), ARGV[3] = grace ms, ARGV[4] = '1' to abandon, ARGV[5] = how many
-- permits the holder took
-- Returns 1 when the token held its permits and gave them back, 0
-- otherwise; 2 more (2 or 3) when departed waiters stood in the way of
-- handing the freed permits over: the caller sends the same call again (a
-- call that holds nothing still hands free permits to the waiters); 4 more
-- (4 or 5) when nobody waited (the caller's next release may then be the
-- plain ZREM and EXISTS).
local holders, queue = KEYS[1], KEYS[2]
local token, now, grace = ARGV[1], tonumber(ARGV[2]), tonumber(ARGV[3])
local names = {token}
for i = 2, tonumber(ARGV[5]) do
  names[#names + 1] = token .. '#' .. i
end
local held = redis.call('ZREM', holders, unpack(names)) > 0 and 1 or 0
local head = redis.call('ZRANGE', queue, 0, 0)[1]
if not head then
  return held + 4
end
-- @include queue
-- @include semaphore
if ARGV[4] == '1' then
  leave_queue(holders, queue, token)
  head = nil
end
local permits = tonumber(redis.call('ZSCORE', holders, '~~n'))
if permits then
  local _, more = grant(holders, holders, queue, now,
    free_permits(holders, -permits, now - grace, token), grace, token, head)
  if more then
    return held + 2
  end
end
return held

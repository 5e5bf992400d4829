-- Fencing tokens. One counter per server (per Redis Cluster slot): the
-- key C = prefix .. '~~fence' (with a hash tag of the lock's slot on
-- Cluster), shared by every lock under that prefix, so no lock leaves a
-- counter behind. A token is never below the caller's clock (microseconds
-- since the Unix epoch, ARGV), so a counter lost with a restart of a
-- server without persistence starts again above the tokens given before it.

-- The next fencing token: strictly greater than every earlier one of the
-- counter, and at least floor (a decimal string).
local function next_fence(counter, floor)
  local n = redis.call('INCR', counter)
  if n < tonumber(floor) then
    redis.call('SET', counter, floor)
    return tonumber(floor)
  end
  return n
end

-- Acquire with a fencing token, atomically: SET NX PX and, when it
-- succeeds, INCR of the lock's fence counter.
-- KEYS[1] = lock, KEYS[2] = fence
-- ARGV[1] = owner token, ARGV[2] = lease ms, ARGV[3] = '1' when this is a
-- replay after a dropped connection (the first try may have taken it)
-- Returns the fencing token, or false (nil) when the lock is held.
if redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then
  return redis.call('INCR', KEYS[2])
end
if ARGV[3] == '1' and redis.call('GET', KEYS[1]) == ARGV[1] then
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
  return tonumber(redis.call('GET', KEYS[2]))
end
return false

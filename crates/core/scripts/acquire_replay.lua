-- Idempotent acquire, sent only when the connection dropped before the reply
-- to a plain SET NX PX arrived: that SET may already have taken the lock for
-- us, in which case the key holds our token and we keep it.
-- KEYS[1] = lock key, ARGV[1] = owner token, ARGV[2] = lease in ms
-- Returns 1 when the lock is ours, 0 when someone else holds it.
if redis.call('set', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then
  return 1
end
if redis.pcall('get', KEYS[1]) == ARGV[1] then
  redis.call('pexpire', KEYS[1], ARGV[2])
  return 1
end
return 0

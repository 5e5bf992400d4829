-- Compare-and-pexpire: extend the lease only if it still holds our token.
-- KEYS[1] = lock key, ARGV[1] = owner token, ARGV[2] = new lease in ms
-- Returns 1 when the lease was ours and is extended, 0 otherwise.
if redis.call('get', KEYS[1]) == ARGV[1] then
  return redis.call('pexpire', KEYS[1], ARGV[2])
end
return 0

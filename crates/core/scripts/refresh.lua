-- Compare-and-pexpire: extend the lease only if it still holds our token.
-- A fenced hold passes its fencing-token key too, which follows the lease
-- (PEXPIRE does nothing when it is missing); an unfenced one passes one key
-- and costs nothing more.
-- KEYS[1] = lock key, KEYS[2] = hold fence (fenced holds only),
-- ARGV[1] = owner token, ARGV[2] = new lease in ms
-- Returns 1 when the lease was ours and is extended, 0 otherwise.
if redis.pcall('get', KEYS[1]) == ARGV[1] then
  if KEYS[2] then
    redis.call('pexpire', KEYS[2], ARGV[2])
  end
  return redis.call('pexpire', KEYS[1], ARGV[2])
end
return 0

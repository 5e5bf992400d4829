-- Remaining lease of a lock, only if it still holds our token.
-- KEYS[1] = lock key, ARGV[1] = owner token
-- Returns the PTTL in ms (-1: no expiry), or -3 when the lock is not ours.
if redis.pcall('get', KEYS[1]) == ARGV[1] then
  return redis.call('pttl', KEYS[1])
end
return -3

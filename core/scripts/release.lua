-- Compare-and-delete: delete the lock only if it still holds our token.
-- KEYS[1] = lock key, ARGV[1] = owner token
-- Returns 1 when we held it and deleted it, 0 otherwise.
if redis.call('get', KEYS[1]) == ARGV[1] then
  return redis.call('del', KEYS[1])
end
return 0

-- Cleans up after an acquire whose outcome is unknown (its connection timed
-- out or dropped before the reply): the token may have taken the lock, may
-- be queued, or may have done nothing. Leaves the queue, and if the token
-- holds the lock, releases it (handing it to the next waiter).
-- KEYS[1] = lock, KEYS[2] = queue, KEYS[3] = waiter info, KEYS[4] = fence,
-- KEYS[5] = the token's wake list
-- ARGV[1] = token, ARGV[2] = wake-key prefix
-- Returns 1 when the token held the lock, 0 otherwise.
-- @handoff
redis.call('ZREM', KEYS[2], ARGV[1])
redis.call('HDEL', KEYS[3], ARGV[1])
redis.call('DEL', KEYS[5])
if redis.call('GET', KEYS[1]) ~= ARGV[1] then
  return 0
end
free_lock(KEYS[1], KEYS[2], KEYS[3], KEYS[4], ARGV[2])
return 1

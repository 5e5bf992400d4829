-- Compare-and-delete with handoff: only the owner may release; if waiters
-- are queued the lock goes straight to the longest-waiting live one (and
-- wakes it), otherwise the key is deleted. With ARGV[2] = '1' (Redlock) the
-- key is deleted and the first waiter only woken.
-- KEYS[1] = lock, KEYS[2] = queue, KEYS[3] = fence
-- ARGV[1] = owner token, ARGV[2] = '1' to wake instead of handing over
-- Returns 1 when we held it and released it, 0 otherwise.
if redis.call('GET', KEYS[1]) ~= ARGV[1] then
  return 0
end
-- Fast path, before any helper is defined: nobody waits.
if not redis.call('ZRANGE', KEYS[2], 0, 0)[1] then
  redis.call('DEL', KEYS[1])
  return 1
end
-- @handoff
free_lock(KEYS[1], KEYS[2], KEYS[3], ARGV[2] == '1')
return 1

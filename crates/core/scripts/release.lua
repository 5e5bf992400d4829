-- Compare-and-delete with handoff: only the owner may release; if waiters
-- are queued the lock goes straight to the longest-waiting live one (and
-- wakes it), otherwise the key is deleted. With ARGV[2] = '1' (Redlock) the
-- key is deleted and the first waiter only woken.
-- The lock's last 16 released tokens are kept in KEYS[4] until ARGV[3] ms
-- after the last release, longer than a lost reply takes to be noticed and
-- the release sent again: the replay (ARGV[4] = '1') finds its token there
-- and reports the release that went through.
-- KEYS[1] = lock, KEYS[2] = queue, KEYS[3] = fence, KEYS[4] = released
-- ARGV[1] = owner token, ARGV[2] = '1' to wake instead of handing over,
-- ARGV[3] = how long released tokens are kept (ms), ARGV[4] = '1' on a replay
-- Returns 1 when we held it and released it, 0 otherwise.
if redis.call('GET', KEYS[1]) ~= ARGV[1] then
  if ARGV[4] == '1' and redis.call('LPOS', KEYS[4], ARGV[1]) then
    return 1
  end
  return 0
end
redis.call('LPUSH', KEYS[4], ARGV[1])
redis.call('LTRIM', KEYS[4], 0, 15)
redis.call('PEXPIRE', KEYS[4], ARGV[3])
-- Fast path, before any helper is defined: nobody waits.
if not redis.call('ZRANGE', KEYS[2], 0, 0)[1] then
  redis.call('DEL', KEYS[1])
  return 1
end
-- @handoff
free_lock(KEYS[1], KEYS[2], KEYS[3], ARGV[2] == '1')
return 1

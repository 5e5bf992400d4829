-- Cleans up after an acquire whose outcome is unknown (its connection timed
-- out or dropped before the reply), or a wait that PHP ended: the token may
-- have taken the lock, may be queued, or may have done nothing. Leaves the
-- queue, and if the token holds the lock, releases it (handing it to the
-- next waiter, or with ARGV[2] = '1' waking it: Redlock).
-- KEYS[1] = lock, KEYS[2] = queue, KEYS[3] = fence
-- ARGV[1] = token, ARGV[2] = '1' to wake instead of handing over
-- Returns 1 when the token held the lock, 0 otherwise.
-- @handoff
leave_queue(KEYS[1], KEYS[2], ARGV[1])
if redis.call('GET', KEYS[1]) ~= ARGV[1] then
  return 0
end
free_lock(KEYS[1], KEYS[2], KEYS[3], ARGV[2] == '1')
return 1

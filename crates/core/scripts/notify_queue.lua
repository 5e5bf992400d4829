-- The wake-up queue of a Redlock waiter on one server: the lock is won by a
-- quorum of servers, so a release here only wakes the first live waiter,
-- which then tries the servers again.
-- KEYS[1] = lock, KEYS[2] = queue
-- ARGV[1] = waiter token, ARGV[2] = mark's life ms, ARGV[3] = '1' to leave
-- the queue, '0' to join it or renew the mark, ARGV[4] = when the waiter
-- began to wait (microseconds, its clock)
-- Returns the lock's PTTL (-2: free, -1: no expiry) after joining, 0 after
-- leaving.
-- @include queue
if ARGV[3] == '1' then
  leave_queue(KEYS[1], KEYS[2], ARGV[1])
  return 0
end
join_queue(KEYS[1], KEYS[2], ARGV[1], ARGV[4], '0:0:0', tonumber(ARGV[2]))
return redis.call('PTTL', KEYS[1])

-- The wake-up queue of a Redlock waiter on one server: the lock is won by a
-- quorum of servers, so this queue never hands the lock over; a release on
-- this server only wakes its first live waiter (`wake_head`), which then
-- tries the servers again.
-- KEYS[1] = lock, KEYS[2] = queue
-- ARGV[1] = waiter token, ARGV[2] = lease ms, ARGV[3] = alive window ms,
-- ARGV[4] = '1' to leave the queue, '0' to join it or renew the alive mark
-- Returns the lock's PTTL (-2: free, -1: no expiry) after joining, 0 after
-- leaving.
-- @handoff
if ARGV[4] == '1' then
  leave_queue(KEYS[1], KEYS[2], ARGV[1])
  return 0
end
join_queue(KEYS[1], KEYS[2], ARGV[1], ARGV[2], tonumber(ARGV[3]), false)
return redis.call('PTTL', KEYS[1])

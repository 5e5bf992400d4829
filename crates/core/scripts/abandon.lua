-- Cleans up after an acquire whose outcome is unknown (its reply was lost),
-- a wait that PHP ended, or a lease found already over when it was won:
-- the token may hold the lock, be queued, or have done nothing. Leaves the
-- queue and, if the token holds the lock, frees it as a release does.
-- With ARGV[3] = '1' (a waiter whose every step was answered: only a
-- release can have given it the lock) only a lock handed to the token is
-- freed: the same token may hold it for another object (option `owner`).
-- KEYS[1] = lock, KEYS[2] = queue, KEYS[3] = hold fence
-- ARGV[1] = token, ARGV[2] = '1' to only wake (Redlock), ARGV[3] = '1' to
-- free only a lock handed over
-- Returns 1 when the token held the lock and it was freed, 0 otherwise, 3
-- when the token still holds it: only departed waiters were looked at,
-- others wait behind them, and the caller sends the same call again.
-- @include queue
local handed = ARGV[3] ~= '1' or redis.call('GET', mark_key(KEYS[1], ARGV[1])) == 'h'
if not handed or redis.pcall('GET', KEYS[1]) ~= ARGV[1] then
  leave_queue(KEYS[1], KEYS[2], ARGV[1])
  return 0
end
-- Out of the queue; the mark stays until the lock is freed, so a call sent
-- again (3 below) still finds the lock handed to us.
redis.call('ZREM', KEYS[2], ARGV[1])
redis.call('DEL', KEYS[3])
if free_lock(KEYS[1], KEYS[2], ARGV[2] == '1') then
  return 3
end
leave_queue(KEYS[1], KEYS[2], ARGV[1])
return 1

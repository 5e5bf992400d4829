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
-- Returns 1 when the token held the lock and it was freed, 0 otherwise.
-- @include queue
local handed = ARGV[3] ~= '1' or redis.call('GET', mark_key(KEYS[1], ARGV[1])) == 'h'
leave_queue(KEYS[1], KEYS[2], ARGV[1])
if not handed or redis.call('GET', KEYS[1]) ~= ARGV[1] then
  return 0
end
redis.call('DEL', KEYS[3])
free_lock(KEYS[1], KEYS[2], ARGV[2] == '1')
return 1

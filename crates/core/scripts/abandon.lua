-- Cleans up after an acquire whose outcome is unknown (its reply was lost),
-- a wait that PHP ended, or a lease found already over when it was won:
-- the token may hold the lock, be queued, or have done nothing. Leaves the
-- queue and, if the token holds the lock, frees it as a release does.
-- With ARGV[3] = '1' (a waiter whose every step was answered: only a
-- release can have given it the lock) only a lock handed to the token is
-- freed: the same token may hold it for another object (option `owner`).
-- With a nonce (ARGV[4], a fixed owner's hold: refresh.lua) a lock that
-- holds the token is the attempt's only when a release handed it over (its
-- mark says "h") or K~~o holds that nonce (the attempt took it): another
-- hold of the same owner is never freed.
-- KEYS[1] = lock, KEYS[2] = queue, KEYS[3] = hold fence
-- ARGV[1] = token, ARGV[2] = '1' to only wake (Redlock), ARGV[3] = '1' to
-- free only a lock handed over, ARGV[4] = the attempt's nonce (absent:
-- none)
-- Returns 1 when the token held the lock and it was freed, 0 otherwise, 3
-- when the token still holds it: only departed waiters were looked at,
-- others wait behind them, and the caller sends the same call again.
-- @include queue
local lock, token, nonce = KEYS[1], ARGV[1], ARGV[4]
local ours = redis.pcall('GET', lock) == token
if ours and (ARGV[3] == '1' or nonce) then
  ours = redis.call('GET', mark_key(lock, token)) == 'h'
    or (ARGV[3] ~= '1' and (redis.call('GET', lock .. '~~o') or '') == nonce)
end
if not ours then
  leave_queue(lock, KEYS[2], token)
  return 0
end
-- Out of the queue; the mark stays until the lock is freed, so a call sent
-- again (3 below) still finds the lock handed to us.
redis.call('ZREM', KEYS[2], token)
redis.call('DEL', KEYS[3])
if free_lock(lock, KEYS[2], ARGV[2] == '1') then
  -- Still ours (the nonce with it), for the call sent again.
  return 3
end
if nonce and nonce ~= '' then
  redis.call('DEL', lock .. '~~o')
end
leave_queue(lock, KEYS[2], token)
return 1

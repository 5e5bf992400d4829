-- Compare-and-delete: only the owner may release. When nobody waits that is
-- all (GET, EXISTS, DEL); otherwise the first live waiter is woken or, if
-- it is starving, handed the lock (lib/queue.lua). The one key and one
-- argument of the common case are all it is sent: the queue and the hold's
-- fence key are named from K here (they share K's slot).
-- A hold with a nonce (a fixed owner's: refresh.lua) is ours only while
-- K~~o holds it too, so a release of an older hold of the same owner, held
-- up in flight, never frees a newer one.
-- KEYS[1] = lock
-- ARGV[1] = owner token, ARGV[2] = '1' when this hold has a fencing token
-- (absent: it has none), ARGV[3] = '1' to only wake (Redlock; absent: no),
-- ARGV[4] = the hold's nonce (absent: none; '' for a hold restored where
-- K~~o was absent)
-- Returns 1 when we held it and released it, 0 when it was not ours, 3
-- when we hold it still: only departed waiters were looked at, others wait
-- behind them, and we call again (lib/queue.lua's free_lock).
local lock, nonce = KEYS[1], ARGV[4]
if redis.pcall('GET', lock) ~= ARGV[1]
    or (nonce and (redis.call('GET', lock .. '~~o') or '') ~= nonce) then
  return 0
end
if ARGV[2] == '1' then
  redis.call('DEL', lock .. '~~f')
end
local queue = lock .. '~~q'
if redis.call('EXISTS', queue) == 0 then
  redis.call('DEL', lock)
  if nonce and nonce ~= '' then
    redis.call('DEL', lock .. '~~o')
  end
  return 1
end
-- @include queue
if free_lock(lock, queue, ARGV[3] == '1') then
  -- Still ours (the nonce with it), for the call sent again.
  return 3
end
if nonce and nonce ~= '' then
  redis.call('DEL', lock .. '~~o')
end
return 1

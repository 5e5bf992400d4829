-- Compare-and-delete: only the owner may release. When nobody waits that is
-- all (GET, EXISTS, DEL); otherwise the first live waiter is woken or, if
-- it is starving, handed the lock (lib/queue.lua). The one key and one
-- argument of the common case are all it is sent: the queue and the hold's
-- fence key are named from K here (they share K's slot).
-- KEYS[1] = lock
-- ARGV[1] = owner token, ARGV[2] = '1' when this hold has a fencing token
-- (absent: it has none), ARGV[3] = '1' to only wake (Redlock; absent: no)
-- Returns 1 when we held it and released it, 0 when it was not ours, 3
-- when we hold it still: only departed waiters were looked at, others wait
-- behind them, and we call again (lib/queue.lua's free_lock).
local lock = KEYS[1]
if redis.pcall('GET', lock) ~= ARGV[1] then
  return 0
end
if ARGV[2] == '1' then
  redis.call('DEL', lock .. '~~f')
end
local queue = lock .. '~~q'
if redis.call('EXISTS', queue) == 0 then
  redis.call('DEL', lock)
  return 1
end
-- @include queue
if free_lock(lock, queue, ARGV[3] == '1') then
  return 3
end
return 1

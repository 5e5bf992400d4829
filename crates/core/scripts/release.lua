-- Compare-and-delete: only the owner may release. When nobody waits that is
-- all (GET, EXISTS, DEL); otherwise the first live waiter is woken or, if
-- it is starving, handed the lock (lib/queue.lua). The one key and one
-- argument of the common case are all it is sent: the queue and the hold's
-- fence key are named from K here (they share K's slot).
-- KEYS[1] = lock
-- ARGV[1] = owner token, ARGV[2] = '1' when this hold has a fencing token
-- (absent: it has none), ARGV[3] = '1' to only wake (Redlock; absent: no),
-- ARGV[4] = '1' when a hand-over gave us the hold and we entered on its
-- wake-up: its mark ("h") goes too (absent: no)
-- Returns 1 when we held it and released it, 0 when it was not ours.
local lock = KEYS[1]
if redis.call('GET', lock) ~= ARGV[1] then
  return 0
end
if ARGV[2] == '1' then
  redis.call('DEL', lock .. '~~f')
end
if ARGV[4] == '1' then
  redis.call('DEL', lock .. '~~a~' .. ARGV[1])
end
local queue = lock .. '~~q'
if redis.call('EXISTS', queue) == 0 then
  redis.call('DEL', lock)
  return 1
end
-- @include queue
free_lock(lock, queue, ARGV[3] == '1')
return 1

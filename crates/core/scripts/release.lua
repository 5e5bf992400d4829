-- Compare-and-delete: only the owner may release. When nobody waits that is
-- all (GET, EXISTS, DEL); otherwise the first live waiter is woken or, if
-- it is starving, handed the lock (lib/queue.lua).
-- KEYS[1] = lock, KEYS[2] = queue, KEYS[3] = hold fence, KEYS[4] = fence
-- counter
-- ARGV[1] = owner token, ARGV[2] = '1' to only wake (Redlock), ARGV[3] =
-- fence floor, ARGV[4] = '1' when this hold has a fencing token
-- Returns 1 when we held it and released it, 0 when it was not ours.
if redis.call('GET', KEYS[1]) ~= ARGV[1] then
  return 0
end
if ARGV[4] == '1' then
  redis.call('DEL', KEYS[3])
end
if redis.call('EXISTS', KEYS[2]) == 0 then
  redis.call('DEL', KEYS[1])
  return 1
end
-- @include fence
-- @include queue
free_lock(KEYS[1], KEYS[2], KEYS[3], KEYS[4], ARGV[3], ARGV[2] == '1')
return 1

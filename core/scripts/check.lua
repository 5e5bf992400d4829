-- A queued waiter's check, after its wait for a wake-up timed out: was the
-- lock handed to us (and the wake-up lost)? Did the holder's lease run out
-- (then the lock goes to the head of the queue)? Or, when giving up, leave
-- the queue atomically, so a handoff and a give-up can never both happen.
-- KEYS[1] = lock key, KEYS[2] = queue key, KEYS[3] = our wake key
-- ARGV[1] = owner token, ARGV[2] = our queue member, ARGV[3] = '1' to give up,
-- ARGV[4] = wake-key prefix
-- Returns {1} when the lock is ours, {2} when we gave up, {0, lock pttl ms}
-- when we still wait.
local lock, queue, wake, token, member = KEYS[1], KEYS[2], KEYS[3], ARGV[1], ARGV[2]
if redis.call('EXISTS', lock) == 0 then
  if not hand_over(lock, queue, ARGV[4]) then
    -- Nobody live is queued (not even us: our entry may have been dropped
    -- as expired by the server's clock): take it.
    local _, ttl = parse_member(member)
    redis.call('SET', lock, token, 'PX', ttl)
  end
end
if redis.call('GET', lock) == token then
  redis.call('ZREM', queue, member)
  redis.call('DEL', wake)
  return {1}
end
if ARGV[3] == '1' then
  redis.call('ZREM', queue, member)
  redis.call('DEL', wake)
  return {2}
end
return {0, redis.call('PTTL', lock)}

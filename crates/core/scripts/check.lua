-- A queued waiter's check, at least every retry_delay: was the lock handed
-- to us and the wake-up lost? Did the holder's lease run out (then the lock
-- goes to the head of the queue)? Otherwise renew our alive mark. With
-- give-up, leave the queue atomically, so a handoff and a give-up can never
-- both happen.
-- KEYS[1] = lock, KEYS[2] = queue, KEYS[3] = fence
-- ARGV[1] = owner token, ARGV[2] = lease ms, ARGV[3] = alive window ms,
-- ARGV[4] = '1' to give up, ARGV[5] = '1' for a fencing token
-- Returns {1, fencing token or -1} when the lock is ours, {2} when we gave
-- up, {0, lock pttl ms} when we still wait.
-- @handoff
local lock, queue, fence = KEYS[1], KEYS[2], KEYS[3]
local token, ttl, alive_ms, fenced = ARGV[1], ARGV[2], tonumber(ARGV[3]), ARGV[5] == '1'
local fencing = nil
if redis.call('EXISTS', lock) == 0 then
  if not hand_over(lock, queue, fence) then
    -- Nobody live is queued, not even us (we may have been dropped as
    -- silent): take it.
    redis.call('SET', lock, token, 'PX', ttl)
    fencing = next_fence(fence, fenced) or -1
  end
end
if not fencing then
  local claimed = claim(lock, token, ttl)
  if claimed then
    fencing = claimed == true and -1 or claimed
  end
end
if fencing or ARGV[4] == '1' then
  leave_queue(lock, queue, token)
  if fencing then
    return {1, fencing}
  end
  return {2}
end
-- Still waiting: renew our entry (or queue again, at the back, if we were
-- dropped as silent after a long pause).
join_queue(lock, queue, token, ttl, alive_ms, fenced)
return {0, redis.call('PTTL', lock)}

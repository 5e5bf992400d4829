-- A queued waiter's check, at least every retry_delay: was the lock handed
-- to us and the wake-up lost? Did the holder's lease run out (then the lock
-- goes to the head of the queue)? Otherwise renew our "alive" mark. With
-- give-up, leave the queue atomically, so a handoff and a give-up can never
-- both happen.
-- KEYS[1] = lock, KEYS[2] = queue, KEYS[3] = waiter info, KEYS[4] = fence,
-- KEYS[5] = our wake list
-- ARGV[1] = owner token, ARGV[2] = lease ms, ARGV[3] = alive window ms,
-- ARGV[4] = '1' to give up, ARGV[5] = wake-key prefix, ARGV[6] = '1' for a
-- fencing token
-- Returns {1, fencing token or -1} when the lock is ours, {2} when we gave
-- up, {0, lock pttl ms} when we still wait.
-- @handoff
local lock, queue, info, fence, wake = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5]
local token, ttl, alive_ms, fenced = ARGV[1], ARGV[2], tonumber(ARGV[3]), ARGV[6] == '1'
local fencing = nil
if redis.call('EXISTS', lock) == 0 then
  if not hand_over(lock, queue, info, fence, ARGV[5]) then
    -- Nobody live is queued, not even us (we may have been dropped as
    -- silent): take it.
    redis.call('SET', lock, token, 'PX', ttl)
    fencing = next_fence(fence, fenced)
  end
end
local ours = redis.call('GET', lock) == token
if ours or ARGV[4] == '1' then
  if ours and not fencing then
    -- Handed over: the fencing token waits in our wake list.
    local pushed = redis.call('LPOP', wake)
    if pushed and pushed ~= '-' then
      fencing = tonumber(pushed)
    end
  end
  redis.call('ZREM', queue, token)
  redis.call('HDEL', info, token)
  redis.call('DEL', wake)
  if ours then
    return {1, fencing or -1}
  end
  return {2}
end
-- Still waiting: renew our entry (or queue again, at the back, if we were
-- dropped as silent after a long pause).
join_queue(queue, info, token, ttl, alive_ms, fenced)
return {0, redis.call('PTTL', lock)}

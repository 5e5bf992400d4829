-- A queued waiter's check, at least every retry_delay: was the lock handed
-- to us and the wake-up lost? Did the holder's lease run out (then the lock
-- goes to the head of the queue)? Otherwise renew our "alive" mark. With
-- give-up, leave the queue atomically, so a handoff and a give-up can never
-- both happen.
-- KEYS[1] = lock, KEYS[2] = queue, KEYS[3] = waiter info, KEYS[4] = our wake list
-- ARGV[1] = owner token, ARGV[2] = lease ms, ARGV[3] = alive window ms,
-- ARGV[4] = '1' to give up, ARGV[5] = wake-key prefix
-- Returns {1} when the lock is ours, {2} when we gave up, {0, lock pttl ms}
-- when we still wait.
local lock, queue, info, wake = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
local token, ttl, alive_ms = ARGV[1], ARGV[2], tonumber(ARGV[3])
if redis.call('EXISTS', lock) == 0 then
  if not hand_over(lock, queue, info, ARGV[5]) then
    -- Nobody live is queued, not even us (we may have been dropped as
    -- silent): take it.
    redis.call('SET', lock, token, 'PX', ttl)
  end
end
if redis.call('GET', lock) == token or ARGV[4] == '1' then
  local ours = redis.call('GET', lock) == token
  redis.call('ZREM', queue, token)
  redis.call('HDEL', info, token)
  redis.call('DEL', wake)
  if ours then
    return {1}
  end
  return {2}
end
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
-- Dropped as silent (a long pause): queue again, at the back.
redis.call('ZADD', queue, 'NX', tonumber(t[1]) * 1000000 + tonumber(t[2]), token)
redis.call('HSET', info, token, string.format('%d:%s', now + alive_ms, ttl))
keep_for(queue, alive_ms + 1000)
keep_for(info, alive_ms + 1000)
return {0, redis.call('PTTL', lock)}

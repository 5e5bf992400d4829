-- First step of a blocking acquire: take the lock if it is free and nobody
-- waits, else join the queue of waiters (or stay in it: a replay after a
-- dropped connection keeps the original place, the token is the member).
-- KEYS[1] = lock, KEYS[2] = queue, KEYS[3] = waiter info, KEYS[4] = fence
-- ARGV[1] = owner token, ARGV[2] = lease ms, ARGV[3] = alive window ms,
-- ARGV[4] = wake-key prefix, ARGV[5] = '1' for a fencing token
-- Returns {1, fencing token or -1} when the lock is ours, {0, lock pttl ms}
-- when queued.
-- @handoff
local lock, queue, info, fence = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
local token, ttl, alive_ms, fenced = ARGV[1], ARGV[2], tonumber(ARGV[3]), ARGV[5] == '1'
if redis.call('EXISTS', lock) == 0 then
  -- Free. Live waiters queued before us (the holder's lease ran out) go first.
  if not hand_over(lock, queue, info, fence, ARGV[4]) then
    redis.call('SET', lock, token, 'PX', ttl)
    return {1, next_fence(fence, fenced) or -1}
  end
end
if redis.call('GET', lock) == token then
  -- A replay: the first try already took it.
  redis.call('ZREM', queue, token)
  redis.call('HDEL', info, token)
  return {1, fenced and tonumber(redis.call('GET', fence)) or -1}
end
join_queue(queue, info, token, ttl, alive_ms, fenced)
return {0, redis.call('PTTL', lock)}

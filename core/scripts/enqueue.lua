-- First step of a blocking acquire: take the lock if it is free and nobody
-- waits, else join the queue of waiters (or stay in it: a replay after a
-- dropped connection keeps the original place, the token is the member).
-- KEYS[1] = lock, KEYS[2] = queue, KEYS[3] = waiter info
-- ARGV[1] = owner token, ARGV[2] = lease ms, ARGV[3] = alive window ms,
-- ARGV[4] = wake-key prefix
-- Returns {1} when the lock is ours, {0, lock pttl ms} when queued.
local lock, queue, info, token, ttl = KEYS[1], KEYS[2], KEYS[3], ARGV[1], ARGV[2]
local alive_ms = tonumber(ARGV[3])
if redis.call('EXISTS', lock) == 0 then
  -- Free. Live waiters queued before us (the holder's lease ran out) go first.
  if not hand_over(lock, queue, info, ARGV[4]) then
    redis.call('SET', lock, token, 'PX', ttl)
  end
end
if redis.call('GET', lock) == token then
  redis.call('ZREM', queue, token)
  redis.call('HDEL', info, token)
  return {1}
end
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
redis.call('ZADD', queue, 'NX', tonumber(t[1]) * 1000000 + tonumber(t[2]), token)
redis.call('HSET', info, token, string.format('%d:%s', now + alive_ms, ttl))
keep_for(queue, alive_ms + 1000)
keep_for(info, alive_ms + 1000)
return {0, redis.call('PTTL', lock)}

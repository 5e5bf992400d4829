-- First step of a blocking acquire: take the lock if it is free and nobody
-- waits, else join the queue.
-- KEYS[1] = lock key, KEYS[2] = queue key
-- ARGV[1] = owner token, ARGV[2] = lease ms, ARGV[3] = wait ms,
-- ARGV[4] = wake-key prefix, ARGV[5] = '1' when this is a replay after a
-- dropped connection (the first call may have run)
-- Returns {1} when the lock is ours, {0, lock pttl ms, member} when queued.
local lock, queue, token, ttl, wait = KEYS[1], KEYS[2], ARGV[1], ARGV[2], tonumber(ARGV[3])
if redis.call('EXISTS', lock) == 0 then
  -- Free. Waiters queued before us (the holder's lease ran out) go first.
  if not hand_over(lock, queue, ARGV[4]) then
    redis.call('SET', lock, token, 'PX', ttl)
    return {1}
  end
end
if redis.call('GET', lock) == token then
  return {1}
end
if ARGV[5] == '1' then
  -- Never leave two entries for one token in the queue.
  for _, m in ipairs(redis.call('ZRANGE', queue, 0, -1)) do
    local _, _, t = parse_member(m)
    if t == token then
      redis.call('ZREM', queue, m)
    end
  end
end
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local member = string.format('%d:%s:%s', now + wait, ttl, token)
redis.call('ZADD', queue, tonumber(t[1]) * 1000000 + tonumber(t[2]), member)
if redis.call('PTTL', queue) < wait + 1000 then
  redis.call('PEXPIRE', queue, wait + 1000)
end
return {0, redis.call('PTTL', lock), member}

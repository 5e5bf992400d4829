-- First step of a blocking acquire: take the lock if it is free and nobody
-- waits, else join the queue of waiters (or stay in it: a replay after a
-- dropped connection keeps the original place, the token is the member).
-- KEYS[1] = lock, KEYS[2] = queue, KEYS[3] = fence
-- ARGV[1] = owner token, ARGV[2] = lease ms, ARGV[3] = alive window ms,
-- ARGV[4] = '1' for a fencing token
-- Returns {1, fencing token or -1} when the lock is ours, {0, lock pttl ms}
-- when queued.
-- @handoff
local lock, queue, fence = KEYS[1], KEYS[2], KEYS[3]
local token, ttl, alive_ms, fenced = ARGV[1], ARGV[2], tonumber(ARGV[3]), ARGV[4] == '1'
if redis.call('EXISTS', lock) == 0 then
  -- Free. Live waiters queued before us (the holder's lease ran out) go first.
  if not hand_over(lock, queue, fence) then
    redis.call('SET', lock, token, 'PX', ttl)
    return {1, next_fence(fence, fenced) or -1}
  end
end
local claimed = claim(lock, token, ttl)
if claimed then
  -- A replay whose first try took it, or handed to us just now.
  leave_queue(lock, queue, token)
  if claimed == true then
    claimed = fenced and tonumber(redis.call('GET', fence)) or -1
  end
  return {1, claimed}
end
join_queue(lock, queue, token, ttl, alive_ms, fenced)
return {0, redis.call('PTTL', lock)}

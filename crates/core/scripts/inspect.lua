-- What this server knows of a lock, for RedisLock::inspect(). Reads only:
-- no command here writes, so a look never changes what it looks at.
-- Bounded: at most SCAN waiters' marks are looked at (the queue's length
-- beyond them is counted as it is).
-- KEYS[1] = lock, KEYS[2] = queue, KEYS[3] = hold fence
-- Returns {owner token or nil, PTTL of the lock, hold fence or nil, live
-- waiters}.
local SCAN = 64
local lock, queue = KEYS[1], KEYS[2]
local live = 0
for _, token in ipairs(redis.call('ZRANGE', queue, 0, SCAN - 1)) do
  live = live + redis.call('EXISTS', lock .. '~~a~' .. token)
end
local queued = redis.call('ZCARD', queue)
if queued > SCAN then
  live = live + queued - SCAN
end
return {redis.call('GET', lock), redis.call('PTTL', lock), redis.call('GET', KEYS[3]), live}

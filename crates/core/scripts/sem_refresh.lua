-- Extends a semaphore holder's lease, only while it is still ours by the
-- caller's clock (lib/semaphore.lua). With ARGV[3] = '0' only reads it.
-- KEYS[1] = holders, KEYS[2] = permits
-- ARGV[1] = token, ARGV[2] = now (ms since the Unix epoch, the caller's
-- clock), ARGV[3] = new lease ms (0: only read), ARGV[4] = grace ms
-- Returns the lease left in ms (after the refresh), or -3 when the permit
-- is not ours.
local holders, permits_key = KEYS[1], KEYS[2]
local token, now, ttl = ARGV[1], tonumber(ARGV[2]), tonumber(ARGV[3])
local score = tonumber(redis.call('ZSCORE', holders, ARGV[1]))
if not score or score <= now then
  return -3
end
if ttl == 0 then
  return score - now
end
redis.call('ZADD', holders, 'XX', now + ttl, token)
local life = ttl + tonumber(ARGV[4]) + 1000
if redis.call('PTTL', holders) < life then
  redis.call('PEXPIRE', holders, life)
end
if redis.call('PTTL', permits_key) < life then
  redis.call('PEXPIRE', permits_key, life)
end
return ttl

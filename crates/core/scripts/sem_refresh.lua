-- Extends a semaphore holder's lease (all its permits), only while it is
-- still ours by the caller's clock (lib/semaphore.lua). With ARGV[3] = '0'
-- only reads it.
-- KEYS[1] = holders
-- ARGV[1] = token, ARGV[2] = now (ms since the Unix epoch, the caller's
-- clock), ARGV[3] = new lease ms (0: only read), ARGV[4] = grace ms,
-- ARGV[5] = how many permits the holder took
-- Returns the lease left in ms (after the refresh), or -3 when the permits
-- are not ours.
local holders = KEYS[1]
local token, now, ttl = ARGV[1], tonumber(ARGV[2]), tonumber(ARGV[3])
local score = tonumber(redis.call('ZSCORE', holders, token))
if not score or score <= now then
  return -3
end
if ttl == 0 then
  return score - now
end
local args = {now + ttl, token}
for i = 2, tonumber(ARGV[5]) do
  args[#args + 1] = now + ttl
  args[#args + 1] = token .. '#' .. i
end
redis.call('ZADD', holders, 'XX', unpack(args))
local life = ttl + tonumber(ARGV[4]) + 1000
if redis.call('PTTL', holders) < life then
  redis.call('PEXPIRE', holders, life)
end
return ttl

-- Extends a read hold's lease, only while it is still ours by the
-- caller's clock and K still holds the read mark (lib/readers.lua), or
-- K's expiry while K holds "~~read:<token>:<lease end>" (a lone reader); K
-- lives at least as long, and no longer than the longest read lease
-- (+ grace) when it lived longer. With ARGV[3] = '0' only reads it.
-- KEYS[1] = readers (K~~r), KEYS[2] = lock (K)
-- ARGV[1] = token, ARGV[2] = now (ms since the Unix epoch, the caller's
-- clock), ARGV[3] = new lease ms (0: only read), ARGV[4] = grace ms
-- Returns the lease left in ms (after the refresh), or -3 when the read
-- hold is not ours.
local readers, lock = KEYS[1], KEYS[2]
local token, now, ttl = ARGV[1], tonumber(ARGV[2]), tonumber(ARGV[3])
-- A lone reader (K holds "~~read:<token>:<lease end>"): its lease is K's
-- expiry, and the lease end it keeps there moves with it.
local held = redis.pcall('GET', lock)
if type(held) == 'table' then
  held = '~~read~other'
end
local mine = '~~read:' .. token .. ':'
if held and string.sub(held, 1, #mine) == mine then
  if ttl == 0 then
    return redis.call('PTTL', lock)
  end
  redis.call('SET', lock, mine .. string.format('%d', now + ttl), 'PX', ttl)
  return ttl
end
local score = tonumber(redis.call('ZSCORE', readers, token))
if not score or score <= now or held ~= '~~read' then
  return -3
end
if ttl == 0 then
  return score - now
end
redis.call('ZADD', readers, 'XX', now + ttl, token)
local grace = tonumber(ARGV[4])
local life = ttl + grace + 1000
if redis.call('PTTL', readers) < life then
  redis.call('PEXPIRE', readers, life)
end
local pttl = redis.call('PTTL', lock)
if pttl < ttl then
  redis.call('PEXPIRE', lock, ttl)
elseif pttl > ttl + grace then
  -- A shorter lease than K has: K lives no longer than the longest read
  -- lease (+ grace), as after a reader's release (lib/readers.lua).
  local top = redis.call('ZRANGE', readers, -1, -1, 'WITHSCORES')
  local left = math.floor(tonumber(top[2]) - now + grace)
  if pttl > left then
    redis.call('PEXPIRE', lock, left)
  end
end
return ttl

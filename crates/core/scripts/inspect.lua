-- What this server knows of a lock K and of a semaphore S of the same
-- name (S = K: its keys S~~s... share K's hash slot), for
-- RedisLock::inspect(). Reads only: no command here writes, so a look
-- never changes what it looks at.
-- Bounded: at most SCAN waiters' marks are looked at per queue (the
-- queue's length beyond them is counted as it is), at most SCAN live
-- holders' tokens are listed (dead ones are skipped by score, not looked
-- at), and holders are counted with ZCOUNT.
-- KEYS[1] = lock (K), KEYS[2] = queue (K~~q), KEYS[3] = hold fence (K~~f),
-- KEYS[4] = readers (K~~r), KEYS[5] = semaphore holders (S~~s),
-- KEYS[6] = semaphore queue (S~~s~~q)
-- ARGV[1] = now (ms since the Unix epoch, the caller's clock),
-- ARGV[2] = grace ms (a holder is live while its lease end is above
-- now - grace)
-- Returns {owner token or nil, PTTL of the lock, hold fence or nil, live
-- waiters, readers, semaphore}: readers is nil unless K holds the read
-- mark, else {live readers, up to SCAN of their tokens, ms left on the
-- longest lease}; semaphore is nil when no key of S exists, else {permits
-- (the member ~~n of S~~s, scored -N) or nil, live holders, up to SCAN of their tokens, ms left on
-- the longest lease, live waiters}.
local SCAN = 64
local lock = KEYS[1]
local now = tonumber(ARGV[1])
local dead_at = now - tonumber(ARGV[2])

-- Waiters in `queue` whose mark (base~~a~<token>) is live.
local function waiters(base, queue)
  local live = 0
  for _, token in ipairs(redis.call('ZRANGE', queue, 0, SCAN - 1)) do
    live = live + redis.call('EXISTS', base .. '~~a~' .. token)
  end
  local queued = redis.call('ZCARD', queue)
  if queued > SCAN then
    live = live + queued - SCAN
  end
  return live
end

-- The live holders of a sorted set scored by lease end: {count (of a
-- semaphore: permits held), up to SCAN tokens (soonest lease end first;
-- a holder of several permits once), ms left on the longest lease}.
local function holders(set)
  local live = redis.call('ZCOUNT', set, '(' .. dead_at, '+inf')
  if live == 0 then
    return {0, {}, 0}
  end
  local tokens = {}
  for _, member in ipairs(redis.call('ZRANGEBYSCORE', set, '(' .. dead_at, '+inf', 'LIMIT', 0, SCAN)) do
    if not string.find(member, '#', 1, true) then
      tokens[#tokens + 1] = member
    end
  end
  local last = redis.call('ZRANGE', set, -1, -1, 'WITHSCORES')
  return {live, tokens, tonumber(last[2]) - now}
end

local owner = redis.pcall('GET', lock)
if type(owner) == 'table' then
  -- Another client's lock of another type (Symfony's RedisStore: a
  -- sorted set): held, its owner named by the type.
  owner = '~~' .. redis.call('TYPE', lock).ok
end
local readers = false
if owner == '~~read' then
  readers = holders(KEYS[4])
elseif owner and string.match(owner, '^~~read:') then
  -- A lone reader: K holds "~~read:<token>:<lease end>", its lease K's
  -- expiry.
  readers = {1, {string.match(owner, '^~~read:([^:]*)')}, redis.call('PTTL', lock)}
  owner = '~~read'
end
local semaphore = false
local base = KEYS[5]
if redis.call('EXISTS', base, KEYS[6]) > 0 then
  local seen = holders(base)
  local n = tonumber(redis.call('ZSCORE', base, '~~n'))
  semaphore = {n and tostring(-n) or false, seen[1], seen[2], seen[3], waiters(base, KEYS[6])}
end
return {owner, redis.call('PTTL', lock), redis.call('GET', KEYS[3]), waiters(lock, KEYS[2]),
  readers, semaphore}

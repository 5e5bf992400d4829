-- Shared by every script that can free a lock while waiters are queued.
--
-- Waiters of the lock K (every key below shares K's hash slot: they all
-- start with K, whose hash tag, if any, they inherit):
--   K~q (sorted set):     member = waiter token, score = arrival order
--   K~a~<token> (string): "<ttl ms>:<alive ms>:<fenced 0|1>", expires after
--                         <alive ms>; a live waiter renews it at least every
--                         retry_delay, so a waiter that died is skipped soon
--                         after. Trailing ":..." fields are ignored.
--   K~w~<token> (list):   the waiter blocks on it; the element pushed is its
--                         fencing token, or "-" when it did not ask for one
--   K~f (string):         counter of fenced acquires, never expires
-- K~a~<token> and K~w~<token> of other waiters are built here, not passed in
-- KEYS: legal in Redis Cluster only because they share K's slot (an
-- invariant of keys.rs). No script calls TIME: liveness is key expiry, so
-- servers that refuse TIME in scripts (ElastiCache Serverless) work.

-- ttl (string), alive window (number) and fenced (boolean) of a waiter.
local function parse_waiter(value)
  if not value then
    return nil, nil, false
  end
  local ttl, alive, fenced = string.match(value, '^(%d+):(%d+):([01])')
  return ttl, tonumber(alive), fenced == '1'
end

-- The next fencing token when fenced, else nil.
local function next_fence(fence, fenced)
  if fenced then
    return redis.call('INCR', fence)
  end
  return nil
end

-- Extends the expiry of a helper key to at least ms (never shortens it).
local function keep_for(key, ms)
  if redis.call('PTTL', key) < ms then
    redis.call('PEXPIRE', key, ms)
  end
end

-- Puts a waiter at the back of the queue (an existing entry keeps its
-- place) and marks it alive for alive_ms.
local function join_queue(lock, queue, token, ttl, alive_ms, fenced)
  if not redis.call('ZSCORE', queue, token) then
    local last = redis.call('ZRANGE', queue, -1, -1, 'WITHSCORES')
    local score = 0
    if last[2] then
      score = tonumber(last[2]) + 1
    end
    redis.call('ZADD', queue, score, token)
  end
  redis.call('SET', lock .. '~a~' .. token,
    string.format('%s:%d:%s', ttl, alive_ms, fenced and '1' or '0'), 'PX', alive_ms)
  keep_for(queue, alive_ms + 1000)
end

-- Removes a waiter's queue entry, alive mark and wake list.
local function leave_queue(lock, queue, token)
  redis.call('ZREM', queue, token)
  redis.call('DEL', lock .. '~a~' .. token, lock .. '~w~' .. token)
end

-- Gives the free lock to the longest-waiting live waiter and wakes it (one
-- RPUSH on its own list: a release wakes one waiter, not all of them) with
-- its fencing token. The lock is set for the waiter's alive window only
-- (at most its ttl): the waiter claims the full lease as soon as it wakes,
-- so a waiter that died meanwhile holds the queue up for one alive window
-- at most. Dead waiters are dropped on the way. Returns the new owner's
-- token, or nil when nobody live waits.
local function hand_over(lock, queue, fence)
  while true do
    local head = redis.call('ZRANGE', queue, 0, 0)[1]
    if not head then
      return nil
    end
    local alive_key = lock .. '~a~' .. head
    local ttl, alive_ms, fenced = parse_waiter(redis.call('GET', alive_key))
    redis.call('ZREM', queue, head)
    redis.call('DEL', alive_key)
    if ttl then
      local claim = math.min(tonumber(ttl), alive_ms)
      redis.call('SET', lock, head, 'PX', claim)
      local wake = lock .. '~w~' .. head
      redis.call('RPUSH', wake, next_fence(fence, fenced) or '-')
      redis.call('PEXPIRE', wake, alive_ms + 1000)
      return head
    end
  end
end

-- Wakes the longest-waiting live waiter without giving it the lock
-- (Redlock: a lock is won on a quorum of servers, so a waiter is only told
-- to try again). It stays queued until it wins or gives up. Dead waiters
-- are dropped on the way.
local function wake_head(lock, queue)
  while true do
    local head = redis.call('ZRANGE', queue, 0, 0)[1]
    if not head then
      return
    end
    local _, alive_ms = parse_waiter(redis.call('GET', lock .. '~a~' .. head))
    if alive_ms then
      local wake = lock .. '~w~' .. head
      redis.call('RPUSH', wake, '-')
      redis.call('PEXPIRE', wake, alive_ms + 1000)
      return
    end
    redis.call('ZREM', queue, head)
  end
end

-- Frees a lock its owner gives up: hands it to the next live waiter, or
-- deletes it when nobody waits. With notify (Redlock) it is deleted and
-- the next live waiter is woken to try again.
local function free_lock(lock, queue, fence, notify)
  if notify then
    redis.call('DEL', lock)
    wake_head(lock, queue)
  elseif not hand_over(lock, queue, fence) then
    redis.call('DEL', lock)
  end
end

-- Makes a lock handed to token its own for the full lease. Returns the
-- fencing token pushed with the hand-over (a number), true when none was
-- asked for, or nil when the lock is not (or no longer) token's.
local function claim(lock, token, ttl)
  if redis.call('GET', lock) ~= token then
    return nil
  end
  redis.call('PEXPIRE', lock, ttl)
  local wake = lock .. '~w~' .. token
  local pushed = redis.call('LPOP', wake)
  redis.call('DEL', wake)
  if pushed and pushed ~= '-' then
    return tonumber(pushed)
  end
  return true
end


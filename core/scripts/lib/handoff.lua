-- Shared by every script that can free a lock while waiters are queued.
--
-- Waiters of a lock:
--   queue (sorted set): member = waiter token, score = arrival (server us)
--   info (hash):        token -> "<alive until ms>:<ttl ms>:<fenced 0|1>"; a
--                       live waiter renews "alive until" at least every
--                       retry_delay, so a waiter that crashed is skipped
--                       soon after
--   wake list:          "<wake prefix><token>", the waiter blocks on it; the
--                       element pushed is the new owner's fencing token, or
--                       "-" when it did not ask for one
--   fence (string):     counter of fenced acquires, never expires

-- Server time in milliseconds.
local function now_ms()
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end

-- alive-until (number), ttl (string) and fenced (boolean) of a waiter.
local function parse_info(info)
  if not info then
    return nil, nil, false
  end
  local alive, ttl, fenced = string.match(info, '^(%d+):(%d+):([01])$')
  return tonumber(alive), ttl, fenced == '1'
end

-- The waiter info of a token.
local function make_info(alive_until, ttl, fenced)
  return string.format('%d:%s:%s', alive_until, ttl, fenced and '1' or '0')
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

-- Puts a waiter in the queue (an existing entry keeps its place) and
-- renews its info for alive_ms.
local function join_queue(queue, info, token, ttl, alive_ms, fenced)
  local t = redis.call('TIME')
  local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
  redis.call('ZADD', queue, 'NX', tonumber(t[1]) * 1000000 + tonumber(t[2]), token)
  redis.call('HSET', info, token, make_info(now + alive_ms, ttl, fenced))
  keep_for(queue, alive_ms + 1000)
  keep_for(info, alive_ms + 1000)
end

-- Gives the free lock to the longest-waiting live waiter and wakes it (one
-- RPUSH on its own list: a release wakes one waiter, not all of them) with
-- its fencing token. Waiters that stopped renewing (crashed) are dropped on
-- the way. Returns the new owner's token, or nil when nobody live waits.
local function hand_over(lock, queue, info, fence, wake_prefix)
  local now = nil
  while true do
    local head = redis.call('ZRANGE', queue, 0, 0)[1]
    if not head then
      return nil
    end
    redis.call('ZREM', queue, head)
    local alive, ttl, fenced = parse_info(redis.call('HGET', info, head))
    redis.call('HDEL', info, head)
    now = now or now_ms()
    if alive and alive > now then
      redis.call('SET', lock, head, 'PX', ttl)
      local wake = wake_prefix .. head
      redis.call('RPUSH', wake, next_fence(fence, fenced) or '-')
      redis.call('PEXPIRE', wake, alive - now + 1000)
      return head
    end
  end
end

-- Frees a lock its owner gives up: hands it to the next live waiter, or
-- deletes it when nobody waits.
local function free_lock(lock, queue, info, fence, wake_prefix)
  if not hand_over(lock, queue, info, fence, wake_prefix) then
    redis.call('DEL', lock)
  end
end


-- Shared by every script that can free a lock while waiters are queued.
--
-- The queue is a sorted set of waiters scored by arrival time (server
-- microseconds). A member is "<deadline ms>:<ttl ms>:<token>": the server
-- time after which the waiter has given up, the lease it asked for, and its
-- owner token. A waiter blocks on its own list "<wake prefix><token>".

-- Server time in milliseconds.
local function now_ms()
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end

-- deadline (number), ttl (string), token (string) of a queue member.
local function parse_member(member)
  local deadline, ttl, token = string.match(member, '^(%d+):(%d+):(.*)$')
  return tonumber(deadline), ttl, token
end

-- Gives the free lock to the longest-waiting waiter whose wait has not run
-- out and wakes it (one RPUSH on its own list: a release wakes one waiter,
-- not all of them). Waiters that gave up without leaving the queue (crashed)
-- are dropped on the way. Returns the chosen member, or nil when nobody waits.
local function hand_over(lock, queue, wake_prefix)
  local now = nil
  while true do
    local head = redis.call('ZRANGE', queue, 0, 0)[1]
    if not head then
      return nil
    end
    redis.call('ZREM', queue, head)
    now = now or now_ms()
    local deadline, ttl, token = parse_member(head)
    if deadline and deadline > now then
      redis.call('SET', lock, token, 'PX', ttl)
      local wake = wake_prefix .. token
      redis.call('RPUSH', wake, '1')
      redis.call('PEXPIRE', wake, deadline - now + 1000)
      return head
    end
  end
end


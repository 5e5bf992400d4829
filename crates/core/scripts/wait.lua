-- One step of a blocking acquire where one server decides (single server,
-- Sentinel, Cluster), run when the waiter starts, after each wake-up or
-- wake-up timeout, and when it gives up:
-- 1. the lock was handed to us by a release (our mark says so), or, on a
--    replay, our first try took it: claim the full lease;
-- 2. giving up: leave the queue;
-- 3. the lock is free (its holder's lease ran out, or a woken waiter is
--    slow to come): take it, whether or not others wait (barging), unless
--    a waiter asks to be handed it (the first starving one): that one is
--    handed it, as a release would have done;
-- 4. else join the queue, or stay in it, with our mark renewed; starving
--    asks the next release to hand the lock to us.
-- KEYS[1] = lock, KEYS[2] = queue, KEYS[3] = hold fence, KEYS[4] = fence
-- counter
-- ARGV[1] = token, ARGV[2] = lease ms, ARGV[3] = mark's life ms,
-- ARGV[4] = '1' for a fencing token, ARGV[5] = fence floor, ARGV[6] = '1'
-- when starving (a release hands it the lock), '0' when not yet (a release
-- frees the lock without waking it: it steps by itself when it starves),
-- ARGV[7] = '1' to give up, ARGV[8] = '1' on a replay,
-- ARGV[9] = when the waiter began to wait (microseconds, its clock),
-- ARGV[10] = '1' when the waiter's wake-up wait (BLPOP on K~~w~<token>)
-- follows in the same request: any answer but waiting pushes "w" there,
-- so that wait ends at once and the step behind it (a replay) answers,
-- ARGV[11] = the hold's nonce (absent: none): a fixed owner's hold keeps it
-- in K~~o beside the token (acquire_replay.lua), so a replay claims only
-- a lock its own try took, never another hold of the same owner
-- Returns {1, fencing token or -1} when the lock is ours, {2} after giving
-- up, {0, the lock's PTTL} while waiting, {3} when the lock is free but
-- only departed waiters were looked at, with more behind them: the waiter
-- steps again at once.
-- @include fence
-- @include queue
local lock, queue, hold_fence, counter = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
local token, ttl, fenced, floor = ARGV[1], ARGV[2], ARGV[4] == '1', ARGV[5]
local nonce = ARGV[11]

-- With a wake-up wait behind this step: ends it at once.
local function answer(reply)
  if ARGV[10] == '1' then
    local list = wake_key(lock, token)
    redis.call('RPUSH', list, 'w')
    redis.call('PEXPIRE', list, tonumber(ARGV[3]))
  end
  return reply
end

local function won(fence)
  leave_queue(lock, queue, token)
  if nonce then
    redis.call('SET', lock .. '~~o', nonce, 'PX', ttl)
  end
  return answer({1, fence or -1})
end

local ours = redis.pcall('GET', lock) == token
local handed = ours and redis.call('GET', mark_key(lock, token)) == 'h'
if handed or (ours and ARGV[8] == '1'
    and (not nonce or redis.call('GET', lock .. '~~o') == nonce)) then
  redis.call('PEXPIRE', lock, ttl)
  local fence = nil
  if fenced then
    -- A hand-over's claim takes the next token (the lock is ours from the
    -- hand-over on, so no grant comes between), on a replay too; a replay
    -- of our own try keeps the token that try took.
    fence = not handed and tonumber(redis.call('GET', hold_fence))
      or next_fence(counter, floor)
    redis.call('SET', hold_fence, fence, 'PX', ttl)
  end
  return won(fence)
end
if ARGV[7] == '1' then
  leave_queue(lock, queue, token)
  return {2}
end
if redis.call('EXISTS', lock) == 0 then
  local head, mark, more = first_live(lock, queue)
  if more then
    return answer({3})
  end
  local to, its = nil, nil
  if head then
    to, its = first_to_hand(lock, queue, head, mark)
  end
  if not (to and to ~= token
      and hand_over(lock, queue, to, its)) then
    redis.call('SET', lock, token, 'PX', ttl)
    local fence = nil
    if fenced then
      fence = next_fence(counter, floor)
      redis.call('SET', hold_fence, fence, 'PX', ttl)
    end
    return won(fence)
  end
end
-- Still waiting, having looked at the lock just now: a wake-up pushed
-- before this step is stale, and a hand-over's "h" (its lease ran out
-- before this step; the lock is someone else's now) must never let the
-- next BLPOP enter.
redis.call('DEL', wake_key(lock, token))
join_queue(lock, queue, token, ARGV[9], ttl .. ':' .. ARGV[4] .. ':' .. ARGV[6], tonumber(ARGV[3]))
return {0, redis.call('PTTL', lock)}

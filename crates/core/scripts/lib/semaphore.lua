-- Semaphores (spliced after lib/queue.lua). A semaphore S keeps its
-- holders in the sorted set B = S~~s: each permit a holder took is a
-- member (its token, then token#2 ... for a holder of several) scored by
-- the end of its lease in ms since the Unix epoch, by the clock of the
-- client that set it; the member ~~n, scored -N, keeps the number of
-- permits N (never counted live). Its waiters are in B's queue
-- (lib/queue.lua with B in place of a lock: B~~q, B~~a~<token> with the
-- mark "<ttl ms>:0:0:<permits asked>", B~~w~<token>). A permit is live
-- while its score is above now - grace (now: the caller's clock, from
-- ARGV), so clocks may differ by up to grace. No call looks at more than
-- SCAN holders or DEPARTED waiters.

-- One call in 16 (the caller's random token ends in 0) drops up to SCAN
-- permits whose lease ended (at or before dead_at; ~~n, scored below 0, is
-- never one): ended leases are never counted, so dropping them is only
-- about memory, and costs the other calls nothing.
local function drop_ended(holders, dead_at, token)
  if string.sub(token, -1) == '0' then
    local dead = redis.call('ZRANGEBYSCORE', holders, '(0', dead_at, 'LIMIT', 0, SCAN)
    if #dead > 0 then
      redis.call('ZREM', holders, unpack(dead))
    end
  end
end

-- Returns how many permits are free (permits - live ones), after
-- drop_ended.
local function free_permits(holders, permits, dead_at, token)
  drop_ended(holders, dead_at, token)
  return permits - redis.call('ZCOUNT', holders, '(' .. dead_at, '+inf')
end

-- Hands free permits to the first live waiters in queue order, each the
-- number it asked for, as long as the first asks no more than is free: a
-- waiter asking more than is free holds the ones behind it (Go's
-- semaphore.Weighted). Each becomes a holder for what is left of its
-- mark's life (at most its ttl; the end the mark carries, by the waiter's
-- clock, 1 ms at least while the mark lives; a mark without one, of an
-- older version: its PTTL), counted live until the mark would have
-- ended (by this clock, grace included: its score is the grace short of
-- it, half the lease at least, for a mark shorter than the grace); it
-- leaves the queue and is woken; the step it sent behind its wake-up wait
-- finds its permits, claims its whole lease at once and drops its mark
-- and wake-up list (nothing reads a mark off the queue: a waiter that
-- departed leaves them to expire). At most SCAN
-- waiters a call. Returns the permits still free, true when more may be
-- owed to waiters not yet looked at (departed ones stood in the way, or
-- SCAN were served: the caller calls again), true when the first live
-- waiter asks more than is free, and true when the waiter `me` was among
-- those served. `grace`: how far clients' clocks may differ (ms). `head`:
-- the queue's head as the caller just read it, if any.
local function grant(base, holders, queue, now, free, grace, me, head)
  local served, mine = 0, false
  while true do
    if free <= 0 then
      -- Nothing to hand: whoever waits asks more than is free.
      return free, false, true, mine
    end
    local token, mark, more = first_live(base, queue, head)
    head = nil
    if not token then
      return free, more, false, mine
    end
    local asked = tonumber(string.match(mark, '^%d+:%d:%d:(%d+)')) or 1
    if asked > free then
      return free, false, true, mine
    end
    if served == SCAN then
      return free, true, false, mine
    end
    local ends = tonumber(string.match(mark, '^%d+:%d:%d:%d+:(%d+)'))
    local left = ends and math.max(1, ends - now) or redis.call('PTTL', mark_key(base, token))
    local claim = math.min(tonumber(string.match(mark, '^(%d+)')) or 0, left)
    redis.call('ZREM', queue, token)
    if claim > 0 then
      local score = now + claim - math.min(grace, math.floor(claim / 2))
      local args = {score, token}
      for i = 2, asked do
        args[#args + 1] = score
        args[#args + 1] = token .. '#' .. i
      end
      redis.call('ZADD', holders, unpack(args))
      -- Woken once: it left the queue, so no other grant wakes it (a
      -- wake-up its step did not consume only costs a spare step).
      local list = wake_key(base, token)
      redis.call('RPUSH', list, '1')
      redis.call('PEXPIRE', list, claim + 1000)
      free = free - asked
      served = served + 1
      mine = mine or token == me
    end
  end
end

-- Semaphores (spliced after lib/queue.lua). A semaphore S keeps its
-- holders in the sorted set B = S~~s (member: a holder's token, score: the
-- end of its lease in ms since the Unix epoch, by the clock of the client
-- that set it) and its waiters in B's queue (lib/queue.lua with B in place
-- of a lock: B~~q, B~~a~<token>, B~~w~<token>); B~~n holds the number of
-- permits. A holder is live while its score is above now - grace (now: the
-- caller's clock, from ARGV), so clocks may differ by up to grace. No call
-- looks at more than SCAN holders or SCAN waiters.

-- Drops up to SCAN holders whose lease ended (at or before dead_at) and
-- returns how many permits are free (permits - live holders).
local function free_permits(holders, permits, dead_at)
  local dead = redis.call('ZRANGEBYSCORE', holders, '-inf', dead_at, 'LIMIT', 0, SCAN)
  if #dead > 0 then
    redis.call('ZREM', holders, unpack(dead))
  end
  return permits - redis.call('ZCOUNT', holders, '(' .. dead_at, '+inf')
end

-- Hands up to `free` permits to the first live waiters, in queue order
-- (at most SCAN of them; departed ones are dropped, lib/queue.lua's
-- first_live): each becomes a holder for what is left of its mark's life
-- (at most its ttl), its mark says "h", and it is woken; the step it sent
-- behind its wake-up wait claims its whole lease at once. Returns the
-- permits still free, and true when some may be owed to waiters not yet
-- looked at (departed ones stood in the way): the caller calls again.
-- `grace`: how far clients' clocks may differ (ms).
local function grant(base, holders, queue, now, free, grace)
  local granted = 0
  while free > 0 do
    local token, mark, more = first_live(base, queue)
    if not token then
      return free, more
    end
    if granted == SCAN then
      return free, true
    end
    local at = mark_key(base, token)
    local claim = math.min(tonumber(string.match(mark, '^(%d+)')) or 0, redis.call('PTTL', at))
    redis.call('ZREM', queue, token)
    if claim > 0 then
      -- Counted live until the mark would have ended (by this clock): a
      -- waiter that departed keeps the permit no longer, grace included
      -- (the live waiter's step claims it within moments, and a claim
      -- whose reply comes after the lease it had left is refused). Half
      -- the lease at least stays, for a mark shorter than the grace.
      redis.call('ZADD', holders, now + claim - math.min(grace, math.floor(claim / 2)), token)
      redis.call('SET', at, 'h', 'PX', claim)
      wake(base, token, claim)
      free = free - 1
      granted = granted + 1
    end
  end
  return free, false
end

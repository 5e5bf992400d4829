-- The waiters of a lock K. Every key below starts with the whole of K, so
-- it shares K's hash slot (K carries a hash tag on Cluster) and, with the
-- "~~" that no lock name may contain, can never be another lock's key:
--   K~~q (sorted set):     member = waiter token, score = when it began to
--                          wait (its clock, microseconds)
--   K~~a~<token> (string): the waiter's mark "<ttl ms>:<fenced>:<starving>"
--                          (starving: 1 hand it the lock; 0 not yet: a
--                          release frees the lock and lets whoever asks
--                          first take it, and the waiter steps by itself
--                          when it starves), or "<ttl ms>:r:<n>" for a
--                          reader (always handed),
--                          expiring when it stops checking in (a live
--                          waiter renews it at least every retry_delay);
--                          "h" once a release handed it the lock
--   K~~w~<token> (list):   the waiter blocks on it; a release pushes "1"
--                          to wake it, "h" when it hands it the lock
--   K~~f (string):         the fencing token of the current hold (set
--                          when it is taken or claimed)
-- K~~a~<token> and K~~w~<token> of other waiters are built here, not
-- passed in KEYS: legal in Redis Cluster because they share K's slot.
-- No script calls TIME (liveness is key expiry), and no call does more than
-- a constant amount of work: it looks at DEPARTED waiters at most.

-- Entries looked at per call elsewhere (ended holders of a semaphore or
-- read holds; dead ones among them are dropped).
local SCAN = 8

-- Waiters looked at per call at most (their marks read in one MGET); the
-- departed ones among them are dropped. A call that finds only departed
-- waiters there, with more behind them, says so and its caller calls
-- again at once (each call drops DEPARTED): departed waiters cost their
-- own removal, never a live waiter's turn, however many they are.
local DEPARTED = 64

local function mark_key(lock, token)
  return lock .. '~~a~' .. token
end

local function wake_key(lock, token)
  return lock .. '~~w~' .. token
end

-- Puts a waiter in the queue in the order of its arrival (the time it
-- began to wait, from its own clock, in microseconds: an entry keeps its
-- place; one dropped and added again goes back to it) with its mark, live
-- for alive_ms.
local function join_queue(lock, queue, token, arrival, mark, alive_ms)
  redis.call('ZADD', queue, 'NX', arrival, token)
  redis.call('SET', mark_key(lock, token), mark, 'PX', alive_ms)
  redis.call('PEXPIRE', queue, alive_ms + 1000)
end

-- Removes a waiter's queue entry, mark and wake list.
local function leave_queue(lock, queue, token)
  redis.call('ZREM', queue, token)
  redis.call('DEL', mark_key(lock, token), wake_key(lock, token))
end

-- Wakes a waiter: "1" when a release freed the lock (one element on its
-- list, never more), or with handed "h", replacing whatever its list
-- held, when a release handed the lock to it.
local function wake(lock, token, ms, handed)
  local list = wake_key(lock, token)
  if handed then
    redis.call('DEL', list)
  elseif redis.call('EXISTS', list) == 1 then
    return
  end
  redis.call('RPUSH', list, handed and 'h' or '1')
  redis.call('PEXPIRE', list, ms + 1000)
end

-- The longest-waiting live waiter, with its mark; the departed ones looked
-- at before it are dropped. Returns nil, nil, true when the DEPARTED
-- waiters looked at were all departed and others wait behind them (the
-- caller calls again), nil, nil, false when nobody waits. `known_head`:
-- the queue's head as the caller just read it (not read again), if any.
local function first_live(lock, queue, known_head)
  local head = known_head or redis.call('ZRANGE', queue, 0, 0)[1]
  if not head then
    return nil, nil, false
  end
  local mark = redis.call('GET', mark_key(lock, head))
  if mark then
    return head, mark, false
  end
  local tokens = redis.call('ZRANGE', queue, 0, DEPARTED - 1)
  local at = {}
  for i, token in ipairs(tokens) do
    at[i] = mark_key(lock, token)
  end
  local marks = redis.call('MGET', unpack(at))
  local gone = {}
  for i, token in ipairs(tokens) do
    if marks[i] then
      redis.call('ZREM', queue, unpack(gone))
      return token, marks[i], false
    end
    gone[i] = token
  end
  redis.call('ZREM', queue, unpack(gone))
  return nil, nil, redis.call('EXISTS', queue) == 1
end

-- Whether a waiter's mark asks a release to hand it the lock: a starving
-- writer's (every writer waiting on one server is, unless it barges first:
-- option starve_after) or a reader's.
local function wants_hand_over(mark)
  return string.match(mark, '^%d+:[01]:1') or string.match(mark, '^%d+:r:')
end

-- The first live waiter that asks to be handed the lock (with its mark),
-- the head (known, with its mark) or one of the DEPARTED - 1 behind it: a
-- starving waiter behind waiters that barge is not kept waiting by them.
-- Nil when none of them asks.
local function first_to_hand(lock, queue, head, mark)
  if wants_hand_over(mark) then
    return head, mark
  end
  local tokens = redis.call('ZRANGE', queue, 1, DEPARTED - 1)
  if #tokens == 0 then
    return nil, nil
  end
  local at = {}
  for i, token in ipairs(tokens) do
    at[i] = mark_key(lock, token)
  end
  local marks = redis.call('MGET', unpack(at))
  for i, token in ipairs(tokens) do
    if marks[i] and wants_hand_over(marks[i]) then
      return token, marks[i]
    end
  end
  return nil, nil
end

-- Hands the free lock to a waiter (with its mark) that asks for it
-- ([wants_hand_over]): the lock is set to its token for what is left of
-- its mark's life (at most its ttl), its mark says "h", and it is woken
-- with "h". The step it sent behind its wake-up wait runs at once and
-- claims its whole lease (a writer its fencing token; a reader turns the
-- lock into the read mark and lets the readers behind it in); a waiter
-- that departed holds it no longer than its mark would have lived. True
-- when handed over.
local function hand_over(lock, queue, head, mark)
  local ttl = tonumber(string.match(mark, '^(%d+):'))
  if not (ttl and wants_hand_over(mark)) then
    return false
  end
  local mark_at = mark_key(lock, head)
  local claim = math.min(ttl, redis.call('PTTL', mark_at))
  if claim <= 0 then
    return false
  end
  redis.call('SET', lock, head, 'PX', claim)
  redis.call('ZREM', queue, head)
  redis.call('SET', mark_at, 'h', 'PX', claim)
  wake(lock, head, claim, true)
  return true
end

-- Frees a lock its owner gives up: the first waiter that asks for it
-- (first_to_hand) is handed the lock; otherwise the lock is deleted, and
-- a waiter that barges (mark "0") is not woken: it steps by itself when
-- it starves, and whoever asks first takes the lock meanwhile. With
-- notify (Redlock, where a quorum decides) the first waiter is only
-- woken. True when only departed waiters were found, with more behind
-- them: the lock is left as it is, and the owner calls again.
local function free_lock(lock, queue, notify)
  local head, mark, more = first_live(lock, queue)
  if more then
    return true
  end
  if head and not notify then
    local to, its = first_to_hand(lock, queue, head, mark)
    if to and hand_over(lock, queue, to, its) then
      return false
    end
  end
  redis.call('DEL', lock)
  if head and (notify or wants_hand_over(mark)) then
    wake(lock, head, 1000)
  end
  return false
end

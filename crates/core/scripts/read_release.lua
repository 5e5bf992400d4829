-- Gives a read hold of the lock K back (lib/readers.lua). The last live
-- reader frees K: a starving writer (or a reader) at the head of the
-- queue is handed it, else K is deleted and the first live waiter woken (lib/queue.lua's
-- free_lock, as a writer's release does). When one reader is left, the
-- first waiter is woken: it may be that reader waiting to promote. With
-- ARGV[4] = '1' (an acquire whose outcome is unknown, or a wait that PHP
-- ended) the token also leaves the queue.
-- KEYS[1] = readers (K~~r), KEYS[2] = queue (K~~q), KEYS[3] = lock (K)
-- ARGV[1] = token, ARGV[2] = now (ms since the Unix epoch, the caller's
-- clock), ARGV[3] = grace ms, ARGV[4] = '1' to abandon
-- Returns 1 when the token held a read hold in force and gave it back, 0
-- otherwise; 2 more (2 or 3) when only departed waiters were looked at,
-- with more behind them: K is left as it is, and the caller sends the same
-- call again (a call that holds nothing still frees K for the waiters).
local readers, queue, lock = KEYS[1], KEYS[2], KEYS[3]
local token, now, grace, abandon = ARGV[1], tonumber(ARGV[2]), tonumber(ARGV[3]), ARGV[4] == '1'
local MARK = '~~read'
-- A lone reader (K holds "~~read:<token>:<lease end>", read_acquire.lua's
-- fast path) gives K back as a writer does (release.lua): GET, EXISTS, DEL.
local mine = '~~read:' .. token .. ':'
local k = redis.pcall('GET', lock)
local lone = type(k) == 'string' and string.sub(k, 1, #mine) == mine
if lone and redis.call('EXISTS', queue) == 0 then
  redis.call('DEL', lock)
  return 1
end
local held = lone and 1 or redis.call('ZREM', readers, token)
if not lone and not abandon and held == 0 and redis.call('EXISTS', queue) == 0 then
  return 0
end
-- @include queue
-- @include readers
if lone then
  if abandon then
    leave_queue(lock, queue, token)
  end
  if free_lock(lock, queue, false) then
    return 3
  end
  return 1
end
if abandon and redis.pcall('GET', lock) == token then
  -- A release handed us the lock and we are gone before we took it: it
  -- goes on to the next waiter (our mark stays until it is freed, so the
  -- same call sent again still finds it ours).
  redis.call('ZREM', queue, token)
  if free_lock(lock, queue, false) then
    return 2
  end
  leave_queue(lock, queue, token)
  return 0
end
if abandon then
  leave_queue(lock, queue, token)
end
if redis.pcall('GET', lock) ~= MARK then
  -- No reader holds K (our lease ran out and a writer may have it).
  return 0
end
local live = live_readers(readers, now - grace)
if live == 0 then
  -- (Dead readers left in K~~r, if any, go with its expiry or later calls.)
  if redis.call('EXISTS', queue) == 0 then
    redis.call('DEL', lock)
  elseif free_lock(lock, queue, false) then
    return held + 2
  end
else
  -- K lives no longer than the longest live read lease (+ grace): not
  -- as long as ours did, nor as long as a lease that ran out did.
  shorten_to_readers(readers, lock, now, grace)
  if live == 1 and redis.call('EXISTS', queue) == 1 then
    local head = first_live(lock, queue)
    if head then
      wake(lock, head, 1000)
    end
  end
end
return held

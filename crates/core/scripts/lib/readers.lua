-- Read holds of a lock K (spliced after lib/queue.lua). While readers hold
-- K, K itself holds the read mark (no owner token is ever equal to it), so
-- a writer's plain SET NX fails as it does against another writer; K
-- lives at least as long as the longest read lease. The readers are the
-- sorted set R = K~~r (member: a reader's token, score: the end of its
-- lease in ms since the Unix epoch, by the clock of the client that set
-- it), live while the score is above now - grace (now: the caller's clock,
-- from ARGV). Readers and writers wait in K's one queue (K~~q), readers
-- with the mark "<ttl ms>:r:0": a release hands K to a reader at the head
-- as to a writer (lib/queue.lua's hand_over; the reader's step turns it
-- into the read mark), and each reader that enters wakes the next one if
-- it too waits to read.

local READ_MARK = '~~read'

-- Whether a waiter's mark is a reader's.
local function is_reader(mark)
  return string.match(mark, '^%d+:r:') ~= nil
end

-- Drops up to SCAN readers whose lease ended (at or before dead_at) and
-- returns how many are live.
local function live_readers(readers, dead_at)
  local dead = redis.call('ZRANGEBYSCORE', readers, '-inf', dead_at, 'LIMIT', 0, SCAN)
  if #dead > 0 then
    redis.call('ZREM', readers, unpack(dead))
  end
  return redis.call('ZCOUNT', readers, '(' .. dead_at, '+inf')
end

-- Wakes the first live waiter when it waits to read (readers enter one
-- after the other, each waking the next).
local function wake_next_reader(lock, queue)
  local head, mark = first_live(lock, queue)
  if head and is_reader(mark) then
    wake(lock, head, 1000)
  end
end

-- Makes K (holding the read mark) live no longer than the longest read
-- lease in R plus grace, by the caller's clock: a reader that leaves, or
-- shortens its lease, does not keep writers out for the rest of its own
-- (longer) lease, nor for one that ran out (a killed reader's, within its
-- grace). Never lengthens K. The caller has a live reader in R.
local function shorten_to_readers(readers, lock, now, grace)
  local top = redis.call('ZRANGE', readers, -1, -1, 'WITHSCORES')
  if not top[2] then
    return
  end
  local left = math.max(1, math.floor(tonumber(top[2]) - now + grace))
  if redis.call('PTTL', lock) > left then
    redis.call('PEXPIRE', lock, left)
  end
end

-- Turns our read hold of the lock K into its write hold (promotion) once
-- we are its only live reader, or one step of a blocking promotion: wait
-- in K's queue as a writer (new readers then wait behind us), woken when
-- the other readers are down to us (lib/readers.lua).
-- KEYS[1] = readers (K~~r), KEYS[2] = queue (K~~q), KEYS[3] = lock (K)
-- ARGV[1] = token, ARGV[2] = now (ms since the Unix epoch, the caller's
-- clock), ARGV[3] = lease ms, ARGV[4] = '0' a plain try, '1' a waiter's
-- step, '2' a waiter giving up, ARGV[5] = mark's life ms, ARGV[6] = when
-- the waiter began to wait (µs, its clock), ARGV[7] = grace ms
-- Returns {1} when K is ours to write, {0, ms} while other readers hold
-- it, {2} after giving up, {-3} when our read hold is gone.
local readers, queue, lock = KEYS[1], KEYS[2], KEYS[3]
local token, now, ttl, mode = ARGV[1], tonumber(ARGV[2]), tonumber(ARGV[3]), ARGV[4]
local held = redis.pcall('GET', lock)
if type(held) == 'table' then
  held = '~~read~other'
end
-- @include queue
-- @include readers
if held == token then
  -- A replay: the first try promoted us.
  redis.call('PEXPIRE', lock, ttl)
  leave_queue(lock, queue, token)
  return {1}
end
if held and string.sub(held, 1, #token + 8) == '~~read:' .. token .. ':' then
  -- A lone reader (read_acquire.lua's fast path) is the only one.
  redis.call('SET', lock, token, 'PX', ttl)
  leave_queue(lock, queue, token)
  return {1}
end
local score = tonumber(redis.call('ZSCORE', readers, token))
if held ~= READ_MARK or not score or score <= now then
  leave_queue(lock, queue, token)
  return {-3}
end
if mode == '2' then
  leave_queue(lock, queue, token)
  return {2}
end
if live_readers(readers, now - tonumber(ARGV[7])) <= 1 then
  redis.call('ZREM', readers, token)
  redis.call('SET', lock, token, 'PX', ttl)
  leave_queue(lock, queue, token)
  return {1}
end
if mode == '1' then
  join_queue(lock, queue, token, ARGV[6], ttl .. ':0:0', tonumber(ARGV[5]))
end
return {0, redis.call('PTTL', lock)}

-- Run once per server and process before the first acquire: runs at all
-- (scripts refused: the server says so here, before anything is taken),
-- and, on Redis 7.0+, asks the ACL whether this connection's user may run
-- every command that the other scripts run on the keys. A user who could
-- take a lock (or a permit) but not release or hand it over would leave it
-- held until its ttl. Runs nothing itself (redis.acl_check_cmd only asks).
-- BLPOP (a waiter's own call) is left out: its refusal ends that wait at
-- once with the server's message.
-- A lock's check: KEYS[1] = lock, KEYS[2] = queue, KEYS[3] = hold fence,
-- KEYS[4] = fence counter, no ARGV.
-- A semaphore's check (sem_acquire.lua, sem_release.lua, sem_refresh.lua
-- and their libraries): ARGV[1] = 'semaphore', KEYS[1] = holders (S~~s),
-- KEYS[2] = queue (S~~s~~q).
-- A lock's read holds' check (read_acquire.lua, read_release.lua,
-- read_refresh.lua, read_promote.lua and their libraries): ARGV[1] =
-- 'readers', KEYS[1] = readers (K~~r), KEYS[2] = queue (K~~q), KEYS[3] =
-- lock.
-- Returns 1, or an error naming the first command refused.
if not redis.acl_check_cmd then
  return 1
end
-- The commands lib/queue.lua runs on the keys of a waiter of base (any
-- token stands for all of them).
local function waiter_calls(base)
  local mark, wake = base .. '~~a~-', base .. '~~w~-'
  return {
    {'SET', mark, '-', 'PX', '1'}, {'GET', mark}, {'MGET', mark}, {'DEL', mark}, {'PTTL', mark},
    {'EXISTS', wake}, {'RPUSH', wake, '-'}, {'PEXPIRE', wake, '1'}, {'DEL', wake},
  }
end
local needed, refusal
if ARGV[1] == 'semaphore' then
  local holders, queue = KEYS[1], KEYS[2]
  refusal = 'NOPERM redislock (semaphore): this user may not run '
  needed = {
    {'ZSCORE', holders, '-'}, {'ZADD', holders, '1', '-'}, {'ZADD', holders, 'XX', '1', '-'},
    {'ZREM', holders, '-'}, {'ZRANGEBYSCORE', holders, '-inf', '1', 'LIMIT', '0', '1'},
    {'ZCOUNT', holders, '(1', '+inf'}, {'PTTL', holders}, {'PEXPIRE', holders, '1'},
    {'EXISTS', queue}, {'ZADD', queue, 'NX', '1', '-'}, {'ZRANGE', queue, '0', '0'},
    {'ZREM', queue, '-'}, {'PEXPIRE', queue, '1'},
  }
  for _, call in ipairs(waiter_calls(holders)) do
    table.insert(needed, call)
  end
elseif ARGV[1] == 'readers' then
  local readers, queue, lock = KEYS[1], KEYS[2], KEYS[3]
  refusal = 'NOPERM redislock (read holds): this user may not run '
  needed = {
    {'ZSCORE', readers, '-'}, {'ZADD', readers, '1', '-'}, {'ZADD', readers, 'XX', '1', '-'},
    {'ZREM', readers, '-'}, {'ZRANGEBYSCORE', readers, '-inf', '1', 'LIMIT', '0', '1'},
    {'ZCOUNT', readers, '(1', '+inf'}, {'ZRANGE', readers, '-1', '-1', 'WITHSCORES'},
    {'PTTL', readers}, {'PEXPIRE', readers, '1'},
    {'DEL', readers},
    {'GET', lock}, {'SET', lock, '-', 'PX', '1'}, {'PTTL', lock}, {'PEXPIRE', lock, '1'},
    {'DEL', lock},
    {'EXISTS', queue}, {'ZADD', queue, 'NX', '1', '-'}, {'ZRANGE', queue, '0', '0'},
    {'ZREM', queue, '-'}, {'PEXPIRE', queue, '1'},
  }
  for _, call in ipairs(waiter_calls(lock)) do
    table.insert(needed, call)
  end
else
  local lock, queue, fence, counter = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
  refusal = 'NOPERM redislock: this user may not run '
  needed = {
    {'SET', lock, '-', 'NX', 'PX', '1'}, {'GET', lock}, {'DEL', lock},
    {'PEXPIRE', lock, '1'}, {'PTTL', lock},
    {'EXISTS', queue}, {'ZADD', queue, 'NX', '1', '-'}, {'ZRANGE', queue, '0', '0'},
    {'ZREM', queue, '-'}, {'PEXPIRE', queue, '1'},
    {'SET', fence, '1', 'PX', '1'}, {'GET', fence}, {'PEXPIRE', fence, '1'}, {'DEL', fence},
    {'INCR', counter}, {'SET', counter, '1'},
  }
  for _, call in ipairs(waiter_calls(lock)) do
    table.insert(needed, call)
  end
end
for _, call in ipairs(needed) do
  if not redis.acl_check_cmd(unpack(call)) then
    return redis.error_reply(refusal .. call[1] .. ' on ' .. call[2])
  end
end
return 1

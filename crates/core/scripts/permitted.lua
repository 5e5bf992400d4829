-- Run once per server and process before the first acquire: runs at all
-- (scripts refused: the server says so here, before anything is taken),
-- and, on Redis 7.0+, asks the ACL whether this connection's user may run
-- every command that the other scripts run on the lock's keys. A user who
-- could take a lock but not release or hand it over would leave it held
-- until its ttl. Runs nothing itself (redis.acl_check_cmd only asks).
-- BLPOP (a waiter's own call) is left out: its refusal ends that wait at
-- once with the server's message.
-- KEYS[1] = lock, KEYS[2] = queue, KEYS[3] = hold fence, KEYS[4] = fence
-- counter
-- Returns 1, or an error naming the first command refused.
if not redis.acl_check_cmd then
  return 1
end
local lock, queue, fence, counter = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
-- Keys of a waiter: any token stands for all of them.
local mark, wake = lock .. '~~a~-', lock .. '~~w~-'
local needed = {
  {'SET', lock, '-', 'NX', 'PX', '1'}, {'GET', lock}, {'DEL', lock},
  {'PEXPIRE', lock, '1'}, {'PTTL', lock},
  {'EXISTS', queue}, {'ZADD', queue, 'NX', '1', '-'}, {'ZRANGE', queue, '0', '0'},
  {'ZREM', queue, '-'}, {'PEXPIRE', queue, '1'},
  {'SET', fence, '1', 'PX', '1'}, {'GET', fence}, {'DEL', fence},
  {'INCR', counter}, {'SET', counter, '1'},
  {'SET', mark, '-', 'PX', '1'}, {'GET', mark}, {'DEL', mark}, {'PTTL', mark},
  {'EXISTS', wake}, {'RPUSH', wake, '-'}, {'PEXPIRE', wake, '1'}, {'DEL', wake},
}
for _, call in ipairs(needed) do
  if not redis.acl_check_cmd(unpack(call)) then
    return redis.error_reply('NOPERM redislock: this user may not run ' .. call[1]
      .. ' on ' .. call[2])
  end
end
return 1

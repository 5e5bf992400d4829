-- Acquire with a fencing token, atomically: SET NX PX and, when it
-- succeeds, the next token of the fence counter, kept in the hold's fence
-- key for as long as the lease (a replay, or a waiter's claim, reads it).
-- KEYS[1] = lock, KEYS[2] = hold fence, KEYS[3] = fence counter
-- ARGV[1] = owner token, ARGV[2] = lease ms, ARGV[3] = fence floor,
-- ARGV[4] = '1' when this is a replay after a lost reply (the first try
-- may have taken it), ARGV[5] = the hold's nonce, kept in K~~o beside a
-- fixed owner's token (absent: none; see acquire_replay.lua)
-- Returns the fencing token, or false (nil) when the lock is held.
-- @include fence
local nonce = ARGV[5]
if redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then
  local fence = next_fence(KEYS[3], ARGV[3])
  redis.call('SET', KEYS[2], fence, 'PX', ARGV[2])
  if nonce then
    redis.call('SET', KEYS[1] .. '~~o', nonce, 'PX', ARGV[2])
  end
  return fence
end
if ARGV[4] == '1' and redis.pcall('GET', KEYS[1]) == ARGV[1]
    and (not nonce or redis.call('GET', KEYS[1] .. '~~o') == nonce) then
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
  if nonce then
    redis.call('PEXPIRE', KEYS[1] .. '~~o', ARGV[2])
  end
  local fence = tonumber(redis.call('GET', KEYS[2])) or next_fence(KEYS[3], ARGV[3])
  redis.call('SET', KEYS[2], fence, 'PX', ARGV[2])
  return fence
end
return false

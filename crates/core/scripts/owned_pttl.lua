-- Remaining lease of a lock, only if it still holds our token (and, for a
-- hold with a nonce, K~~o that nonce: refresh.lua).
-- KEYS[1] = lock key, ARGV[1] = owner token, ARGV[2] = the hold's nonce
-- (absent: none)
-- Returns the PTTL in ms (-1: no expiry), or -3 when the lock is not ours.
local nonce = ARGV[2]
if redis.pcall('get', KEYS[1]) == ARGV[1]
    and (not nonce or (redis.call('get', KEYS[1] .. '~~o') or '') == nonce) then
  return redis.call('pttl', KEYS[1])
end
return -3

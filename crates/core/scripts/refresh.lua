-- Compare-and-pexpire: extend the lease only if it still holds our token
-- (and, for a hold with a nonce, K~~o still holds that nonce: a fixed
-- owner's older hold never extends or cuts a newer one; '' stands for a
-- hold restored where K~~o was absent). A fenced hold passes its
-- fencing-token key too, which follows the lease (PEXPIRE does nothing
-- when it is missing); an unfenced one passes one key and costs nothing
-- more.
-- KEYS[1] = lock key, KEYS[2] = hold fence (fenced holds only),
-- ARGV[1] = owner token, ARGV[2] = new lease in ms, ARGV[3] = the hold's
-- nonce (absent: none)
-- Returns 1 when the lease was ours and is extended, 0 otherwise.
local nonce = ARGV[3]
if redis.pcall('get', KEYS[1]) == ARGV[1]
    and (not nonce or (redis.call('get', KEYS[1] .. '~~o') or '') == nonce) then
  if KEYS[2] then
    redis.call('pexpire', KEYS[2], ARGV[2])
  end
  if nonce and nonce ~= '' then
    redis.call('pexpire', KEYS[1] .. '~~o', ARGV[2])
  end
  return redis.call('pexpire', KEYS[1], ARGV[2])
end
return 0

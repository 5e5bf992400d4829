-- Reentrant acquire: this process already holds the lock under ARGV[1].
-- Confirm that the lease is still ours and make it last at least the new
-- acquirer's ttl (never shorten it); a fenced hold's fencing-token key
-- follows the lease, and so does a hold's nonce (refresh.lua).
-- KEYS[1] = lock key, KEYS[2] = hold fence (fenced holds only),
-- ARGV[1] = owner token, ARGV[2] = lease in ms, ARGV[3] = the hold's
-- nonce (absent: none)
-- Returns 1 when the lease is ours (and now long enough), 0 when it was lost.
local nonce = ARGV[3]
if redis.pcall('get', KEYS[1]) ~= ARGV[1]
    or (nonce and (redis.call('get', KEYS[1] .. '~~o') or '') ~= nonce) then
  return 0
end
if redis.call('pttl', KEYS[1]) < tonumber(ARGV[2]) then
  redis.call('pexpire', KEYS[1], ARGV[2])
  if KEYS[2] then
    redis.call('pexpire', KEYS[2], ARGV[2])
  end
  if nonce and nonce ~= '' then
    redis.call('pexpire', KEYS[1] .. '~~o', ARGV[2])
  end
end
return 1

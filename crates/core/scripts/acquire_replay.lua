-- Takes the lock, or finds it taken by an earlier try of the same hold:
-- an acquire sent again when the connection dropped before the reply to a
-- plain SET NX PX arrived (that SET may already have taken the lock for
-- us, in which case the key holds our token and we keep it), and the
-- first try of a hold with a nonce.
-- A hold with a nonce (a fixed owner's token is not the hold's own: option
-- `owner`) keeps it in K~~o for its lease beside the token: the hold is
-- ours only where both match, so no command of an older hold of the same
-- owner can ever act on it.
-- KEYS[1] = lock key, ARGV[1] = owner token, ARGV[2] = lease in ms,
-- ARGV[3] = the hold's nonce (absent: none)
-- Returns 1 when the lock is ours, 0 when someone else holds it.
local lock, token, ttl, nonce = KEYS[1], ARGV[1], ARGV[2], ARGV[3]
if redis.call('set', lock, token, 'NX', 'PX', ttl) then
  if nonce then
    redis.call('set', lock .. '~~o', nonce, 'PX', ttl)
  end
  return 1
end
if redis.pcall('get', lock) == token
    and (not nonce or redis.call('get', lock .. '~~o') == nonce) then
  redis.call('pexpire', lock, ttl)
  if nonce then
    redis.call('pexpire', lock .. '~~o', ttl)
  end
  return 1
end
return 0

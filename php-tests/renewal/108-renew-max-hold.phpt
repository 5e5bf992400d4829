--TEST--
auto_renew with max_hold: renewal stops after max_hold, the lease then runs out; isAcquired() and release() say so
--EXTENSIONS--
redislock
--SKIPIF--
<?php require __DIR__ . '/../skipif.inc'; ?>
--FILE--
<?php
require __DIR__ . '/../config.inc';
require __DIR__ . '/../children.inc';
$url = redislock_test_url();
$key = redislock_test_key('max-hold');

$lock = new RedisLock($key, 0.5, $url, ['auto_renew' => true, 'max_hold' => 1.0]);
$t0 = hrtime(true);
var_dump($lock->acquire());
$token = $lock->token();
$still_held = true;
$gone = wait_until(function () use ($url, $key, $token, &$still_held) {
    $owner = redis_cmd($url, 'GET', $key);
    $still_held = $still_held && ($owner === null || $owner === $token);
    return $owner === null;
}, 3.0);
$gone_after = since($t0);
check('the key vanished', $gone);
check('held by us until then', $still_held);
// Renewed past its 0.5 s ttl, but not past max_hold + one ttl.
check('between 1.0 and 2.0 s after acquire', $gone_after > 1.0 && $gone_after < 2.0, sprintf('%.3f s', $gone_after));
var_dump($lock->isAcquired());
var_dump($lock->release());
var_dump(redis_cmd($url, 'EXISTS', $key));
?>
--EXPECT--
bool(true)
the key vanished: ok
held by us until then: ok
between 1.0 and 2.0 s after acquire: ok
bool(false)
bool(false)
int(0)

--TEST--
An ACL user limited to the lock prefix (~prefix*) can acquire and release; keys outside it are a LockException (NOPERM)
--EXTENSIONS--
redislock
--SKIPIF--
<?php require __DIR__ . '/../skipif.inc'; ?>
--FILE--
<?php
require __DIR__ . '/../config.inc';
$redis = TestRedis::start();
$admin = $redis->url();
$port = $redis->port;
// The usual way to share one Redis between applications: each user may
// only touch keys under its own prefix.
var_dump(redis_cmd($admin, 'ACL', 'SETUSER', 'app', 'on', '>apppw', '~app:*', '&*', '+@all'));
$url = "redis://app:apppw@127.0.0.1:$port";
$key = redislock_test_key('acl');

$lock = new RedisLock($key, 5, $url, ['prefix' => 'app:']);
var_dump($lock->acquire());
var_dump(redis_cmd($admin, 'GET', "app:$key") === $lock->token());
var_dump($lock->isAcquired());
var_dump($lock->refresh(6));
try {
    var_dump($lock->release());
} catch (RedisLock\LockException $e) {
    echo get_class($e), ": ", str_replace((string) $port, 'PORT', $e->getMessage()), "\n";
}
var_dump(redis_cmd($admin, 'EXISTS', "app:$key"));
// withLock (acquire + release) under the prefix.
try {
    var_dump($lock->withLock(fn() => 'done'));
} catch (RedisLock\LockException $e) {
    echo get_class($e), ": ", str_replace((string) $port, 'PORT', $e->getMessage()), "\n";
}
var_dump(redis_cmd($admin, 'EXISTS', "app:$key"));

// Outside the prefix: refused by Redis, reported as a LockException.
$outside = new RedisLock($key, 5, $url, ['prefix' => 'other:']);
try {
    $outside->acquire();
    echo "acquired outside the ACL pattern\n";
} catch (RedisLock\LockException $e) {
    echo get_class($e), "\n";
    echo stripos($e->getMessage(), 'noperm') !== false ? "NOPERM reported\n" : $e->getMessage() . "\n";
    echo str_contains($e->getMessage(), 'apppw') ? "LEAK\n" : "no leak\n";
}
?>
--EXPECT--
string(2) "OK"
bool(true)
bool(true)
bool(true)
bool(true)
bool(true)
int(0)
string(4) "done"
int(0)
RedisLock\LockException
NOPERM reported
no leak

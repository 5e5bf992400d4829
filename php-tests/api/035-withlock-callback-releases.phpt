--TEST--
withLock: a callback that releases the lock itself gets its value back, no LockLostException
--EXTENSIONS--
redislock
--SKIPIF--
<?php require __DIR__ . '/../skipif.inc'; ?>
--FILE--
<?php
require __DIR__ . '/../config.inc';
$url = redislock_test_url();
$key = redislock_test_key('cb-release');
$lock = redislock_test_lock($key, 10);
var_dump($lock->withLock(function (RedisLock $l) use ($url, $key) {
    var_dump($l->release());
    var_dump(redis_cmd($url, 'EXISTS', redislock_test_stored_key($key)));
    return 'done early';
}));
var_dump($lock->withLock(fn (RedisLock $l) => $l->forceRelease() ? 'forced' : 'not forced'));
// A lease that is really lost is still reported.
try {
    $lock->withLock(function () use ($url, $key) {
        redis_cmd($url, 'DEL', redislock_test_stored_key($key));
    });
} catch (RedisLock\LockLostException $e) {
    echo get_class($e), "\n";
}
var_dump(redis_cmd($url, 'EXISTS', redislock_test_stored_key($key)));
?>
--EXPECT--
bool(true)
int(0)
string(10) "done early"
string(6) "forced"
RedisLock\LockLostException
int(0)

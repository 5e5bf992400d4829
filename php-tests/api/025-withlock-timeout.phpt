--TEST--
withLock() throws TimeoutException naming the key when the lock stays held elsewhere past $wait; the callback is not called
--EXTENSIONS--
redislock
--SKIPIF--
<?php require __DIR__ . '/../skipif.inc'; ?>
--FILE--
<?php
require __DIR__ . '/../config.inc';
$url = redislock_test_url();
$key = redislock_test_key('withlock-timeout');
redis_cmd($url, 'SET', redislock_test_stored_key($key), 'other-owner', 'PX', '10000');

$lock = redislock_test_lock($key, 10);
$called = false;
foreach ([0.3, 0.0] as $wait) {
    $t0 = microtime(true);
    try {
        $lock->withLock(function () use (&$called) { $called = true; }, $wait);
        echo "no exception\n";
    } catch (RedisLock\TimeoutException $e) {
        $elapsed = microtime(true) - $t0;
        echo get_class($e), "\n";
        var_dump($e instanceof RedisLock\LockException);
        var_dump(str_contains($e->getMessage(), $key));
        var_dump($elapsed >= $wait && $elapsed < $wait + 0.7);
    }
}
var_dump($called);
var_dump($lock->token());
var_dump(redis_cmd($url, 'GET', redislock_test_stored_key($key)));
$pttl = redis_cmd($url, 'PTTL', redislock_test_stored_key($key));
var_dump($pttl > 8000 && $pttl <= 10000);
redis_cmd($url, 'DEL', redislock_test_stored_key($key));
?>
--EXPECT--
RedisLock\TimeoutException
bool(true)
bool(true)
bool(true)
RedisLock\TimeoutException
bool(true)
bool(true)
bool(true)
bool(false)
NULL
string(11) "other-owner"
bool(true)

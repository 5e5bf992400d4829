--TEST--
withLock() throws LockLostException after the callback when the lease was lost; a callback's own exception wins
--EXTENSIONS--
redislock
--SKIPIF--
<?php require __DIR__ . '/../skipif.inc'; ?>
--FILE--
<?php
require __DIR__ . '/../config.inc';
$url = redislock_test_url();
$key = redislock_test_key('withlock-lost');
$lock = redislock_test_lock($key, 10);

echo "-- key deleted\n";
$after = false;
try {
    $lock->withLock(function () use ($url, $key, &$after) {
        redis_cmd($url, 'DEL', redislock_test_stored_key($key));
        $after = true;                           // the callback runs to its end
        return 'value';
    });
    echo "no exception\n";
} catch (RedisLock\LockException $e) {
    echo get_class($e), "\n";
}
var_dump($after);
var_dump(redis_cmd($url, 'EXISTS', redislock_test_stored_key($key)));
var_dump($lock->token());

echo "-- key overwritten\n";
try {
    $lock->withLock(function () use ($url, $key) {
        redis_cmd($url, 'SET', redislock_test_stored_key($key), 'new-owner', 'PX', '10000');
    });
    echo "no exception\n";
} catch (RedisLock\LockException $e) {
    echo get_class($e), "\n";
}
var_dump(redis_cmd($url, 'GET', redislock_test_stored_key($key)));          // the new owner's lock survives
redis_cmd($url, 'DEL', redislock_test_stored_key($key));

echo "-- lost and the callback throws\n";
$mine = new InvalidArgumentException('from callback');
try {
    $lock->withLock(function () use ($url, $key, $mine) {
        redis_cmd($url, 'DEL', redislock_test_stored_key($key));
        throw $mine;
    });
    echo "no exception\n";
} catch (Throwable $e) {
    echo get_class($e), "\n";
    var_dump($e === $mine);
}
var_dump(redis_cmd($url, 'EXISTS', redislock_test_stored_key($key)));
?>
--EXPECT--
-- key deleted
RedisLock\LockLostException
bool(true)
int(0)
NULL
-- key overwritten
RedisLock\LockLostException
string(9) "new-owner"
-- lost and the callback throws
InvalidArgumentException
bool(true)
int(0)

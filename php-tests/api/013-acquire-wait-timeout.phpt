--TEST--
acquire($wait) gives up after $wait seconds: never early, not much late, key untouched
--EXTENSIONS--
redislock
--SKIPIF--
<?php require __DIR__ . '/../skipif.inc'; ?>
--FILE--
<?php
require __DIR__ . '/../config.inc';
$url = redislock_test_url();
$key = redislock_test_key('wait-timeout');
$other = 'other-owner';
redis_cmd($url, 'SET', redislock_test_stored_key($key), $other, 'PX', '10000');

$lock = redislock_test_lock($key, 5);
foreach ([0.3, 0.05] as $wait) {
    $t0 = microtime(true);
    $got = $lock->acquire($wait);
    $elapsed = microtime(true) - $t0;
    var_dump($got);
    var_dump($elapsed >= $wait);
    var_dump($elapsed < $wait + 0.7);
    var_dump($lock->token());
}
var_dump(redis_cmd($url, 'GET', redislock_test_stored_key($key)) === $other);
$pttl = redis_cmd($url, 'PTTL', redislock_test_stored_key($key));
var_dump($pttl > 8000 && $pttl <= 10000);
redis_cmd($url, 'DEL', redislock_test_stored_key($key));
?>
--EXPECT--
bool(false)
bool(true)
bool(true)
NULL
bool(false)
bool(true)
bool(true)
NULL
bool(true)
bool(true)

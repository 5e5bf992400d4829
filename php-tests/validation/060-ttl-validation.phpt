--TEST--
ttl validation: 0, negative, NAN, INF, below 1 ms and above one year are ValueErrors naming Argument #2 ($ttl)
--EXTENSIONS--
redislock
--SKIPIF--
<?php require __DIR__ . '/../skipif.inc'; ?>
--FILE--
<?php
require __DIR__ . '/../config.inc';
$url = redislock_test_url();
$key = redislock_test_key('ttl');
foreach (['0' => 0, '0.0' => 0.0, '-1' => -1, '-0.5' => -0.5, 'NAN' => NAN, 'INF' => INF, '-INF' => -INF,
          '0.0001' => 0.0001, '0.00049' => 0.00049, '31536000.001' => 31536000.001, '1e9' => 1e9] as $label => $ttl) {
    try {
        new RedisLock($key, $ttl, $url);
        echo "$label: accepted\n";
    } catch (ValueError $e) {
        echo "$label: ", $e->getMessage(), "\n";
    }
}
// The same checks apply to restore().
try {
    RedisLock::restore($key, 'tok', -2, $url);
    echo "restore: accepted\n";
} catch (ValueError $e) {
    echo "restore: ", $e->getMessage(), "\n";
}
// Valid values: int, float, the smallest (rounds to 1 ms) and the largest.
foreach ([1, 1.5, 0.001, 0.0005, 31536000, 10] as $ttl) {
    $lock = new RedisLock($key, $ttl, $url);
    $info = $lock->__debugInfo();
    echo "ok ", var_export($info['ttl'], true), "\n";
}
$lock = new RedisLock($key, 2.5, $url);
var_dump($lock->acquire());
$pttl = redis_cmd($url, 'PTTL', $key);
var_dump($pttl > 2000 && $pttl <= 2500);
var_dump($lock->release());
?>
--EXPECT--
0: RedisLock::__construct(): Argument #2 ($ttl) must be greater than 0
0.0: RedisLock::__construct(): Argument #2 ($ttl) must be greater than 0
-1: RedisLock::__construct(): Argument #2 ($ttl) must be greater than 0
-0.5: RedisLock::__construct(): Argument #2 ($ttl) must be greater than 0
NAN: RedisLock::__construct(): Argument #2 ($ttl) must be a number, NaN given
INF: RedisLock::__construct(): Argument #2 ($ttl) must be finite
-INF: RedisLock::__construct(): Argument #2 ($ttl) must be finite
0.0001: RedisLock::__construct(): Argument #2 ($ttl) must be at least 0.001 (1 ms)
0.00049: RedisLock::__construct(): Argument #2 ($ttl) must be at least 0.001 (1 ms)
31536000.001: RedisLock::__construct(): Argument #2 ($ttl) must be at most 31536000 seconds (one year)
1e9: RedisLock::__construct(): Argument #2 ($ttl) must be at most 31536000 seconds (one year)
restore: RedisLock::restore(): Argument #3 ($ttl) must be greater than 0
ok 1.0
ok 1.5
ok 0.001
ok 0.001
ok 31536000.0
ok 10.0
bool(true)
bool(true)
bool(true)

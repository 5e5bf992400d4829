--TEST--
A new connection to a frozen server fails within about connect_timeout + read_timeout, not a multiple of them
--EXTENSIONS--
redislock
--SKIPIF--
<?php require __DIR__ . '/../skipif.inc'; ?>
--FILE--
<?php
require __DIR__ . '/../config.inc';
$redis = TestRedis::start();
$key = redislock_test_key('frozen');
// Frozen before the first use: the kernel accepts the TCP connection, then
// nothing answers, neither the connection handshake nor the command.
$redis->pause();
$lock = new RedisLock($key, 10, $redis->url(), ['connect_timeout' => 1, 'read_timeout' => 0.2]);
$t = microtime(true);
try {
    var_dump($lock->acquire());
} catch (RedisLock\ConnectionException $e) {
    $elapsed = microtime(true) - $t;
    // connect_timeout (1) + read_timeout (0.2), plus scheduling slack.
    echo $elapsed < 1.5 ? "failed in time\n" : sprintf("took %.2fs\n", $elapsed);
    echo str_contains($e->getMessage(), 'timed out') ? "timed out\n" : $e->getMessage() . "\n";
}
$redis->resume();
var_dump($lock->acquire());
var_dump($lock->release());
?>
--EXPECT--
failed in time
timed out
bool(true)
bool(true)

--TEST--
read_timeout: a frozen server makes a call throw ConnectionException after about read_timeout; afterwards no stale reply is read
--EXTENSIONS--
redislock
--SKIPIF--
<?php require __DIR__ . '/../skipif.inc'; ?>
--FILE--
<?php
require __DIR__ . '/../config.inc';
$redis = TestRedis::start();
$url = $redis->url();
$key = redislock_test_key('rto');
$lock = new RedisLock($key, 10, $url, ['read_timeout' => 0.3]);
var_dump($lock->acquire());
$token = $lock->token();

$redis->pause();
$t = microtime(true);
try {
    var_dump($lock->isAcquired());
} catch (RedisLock\ConnectionException $e) {
    $elapsed = microtime(true) - $t;
    echo "ConnectionException after ", $elapsed >= 0.25 && $elapsed < 2.0 ? "about read_timeout" : "{$elapsed}s", "\n";
    echo str_replace((string) $redis->port, 'PORT', $e->getMessage()), "\n";
}
$redis->resume();

// The frozen server now answers the GET it had received; that reply must
// not be taken as the answer to the next command (a script returning a
// number: a stale token string would not be one).
$ttl = $lock->remainingTtl();
var_dump(is_float($ttl) && $ttl > 5 && $ttl <= 10);
var_dump($lock->isAcquired());
var_dump($lock->token() === $token);
var_dump($lock->refresh(20));
$pttl = redis_cmd($url, 'PTTL', $key);
var_dump($pttl > 19000 && $pttl <= 20000);
var_dump(redis_cmd($url, 'GET', $key) === $token);
var_dump($lock->release());
var_dump($lock->isAcquired());
var_dump(redis_cmd($url, 'EXISTS', $key));
?>
--EXPECTF--
bool(true)
ConnectionException after about read_timeout
Redis redis://127.0.0.1:PORT/0: timed out: %s
bool(true)
bool(true)
bool(true)
bool(true)
bool(true)
bool(true)
bool(true)
bool(false)
int(0)

--TEST--
Nested withLock() on the same key does not deadlock; the key is released once, at the end
--EXTENSIONS--
redislock
--SKIPIF--
<?php require __DIR__ . '/../skipif.inc'; ?>
--FILE--
<?php
require __DIR__ . '/../config.inc';
$url = redislock_test_url();
$key = redislock_test_key('nested');

$outer = redislock_test_lock($key, 10);
$t0 = microtime(true);
$result = $outer->withLock(function (RedisLock $l) use ($url, $key) {
    $token = $l->token();
    echo "outer\n";
    $inner = redislock_test_lock($key, 10);
    $v = $inner->withLock(function (RedisLock $i) use ($url, $key, $token) {
        echo "inner (other object)\n";
        var_dump($i->token() === $token);
        var_dump(redis_cmd($url, 'GET', redislock_test_stored_key($key)) === $token);
        return 'a';
    }, 2.0);
    var_dump(redis_cmd($url, 'GET', redislock_test_stored_key($key)) === $token);   // still held by the outer
    $v .= $l->withLock(function () use ($url, $key, $token) {
        echo "inner (same object)\n";
        var_dump(redis_cmd($url, 'GET', redislock_test_stored_key($key)) === $token);
        return 'b';
    }, 2.0);
    var_dump(redis_cmd($url, 'GET', redislock_test_stored_key($key)) === $token);
    var_dump($l->isAcquired());
    return $v . 'c';
}, 2.0);
var_dump(microtime(true) - $t0 < 1.0);
var_dump($result);
var_dump(redis_cmd($url, 'EXISTS', redislock_test_stored_key($key)));
var_dump($outer->token());
var_dump($outer->release());
?>
--EXPECT--
outer
inner (other object)
bool(true)
bool(true)
bool(true)
inner (same object)
bool(true)
bool(true)
bool(true)
bool(true)
string(3) "abc"
int(0)
NULL
bool(false)

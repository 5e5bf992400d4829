--TEST--
A lock cannot be serialized, unserialized or cloned (a hold has one owner)
--EXTENSIONS--
redislock
--SKIPIF--
<?php require __DIR__ . '/../skipif.inc'; ?>
--FILE--
<?php
require __DIR__ . '/../config.inc';
$url = redislock_test_url();
$key = redislock_test_key('clone');
$lock = redislock_test_lock($key, 5);
var_dump($lock->acquire());
function show(callable $f): void
{
    show_outcome($f, fn ($r) => 'no exception: ' . get_debug_type($r));
}
show(fn() => serialize($lock));
show(fn() => serialize([$lock]));
show(fn() => unserialize('O:9:"RedisLock":0:{}'));
show(fn() => clone $lock);
var_dump((new ReflectionClass(RedisLock::class))->isCloneable());
// The original is untouched by the failed attempts.
var_dump($lock->isAcquired());
var_dump($lock->release());
var_dump(redis_cmd($url, 'EXISTS', redislock_test_stored_key($key)));
?>
--EXPECTF--
bool(true)
Exception: Serialization of 'RedisLock' is not allowed
Exception: Serialization of 'RedisLock' is not allowed
Exception: Unserialization of 'RedisLock' is not allowed
Error: Call to private%sRedisLock::__clone() from global scope
bool(false)
bool(true)
bool(true)
int(0)

--TEST--
key() returns the key without prefix; option prefix stores the lock at prefix . key in Redis
--EXTENSIONS--
redislock
--SKIPIF--
<?php require __DIR__ . '/../skipif.inc'; ?>
--FILE--
<?php
require __DIR__ . '/../config.inc';
$url = redislock_test_url();
$key = redislock_test_key('prefix');
$prefix = 'phpt-prefix-' . getmypid() . ':';

$plain = new RedisLock($key, 10, $url);
var_dump($plain->key() === $key);

$lock = new RedisLock($key, 10, $url, ['prefix' => $prefix]);
var_dump($lock->key() === $key);
var_dump($lock->acquire());
var_dump($lock->key() === $key);
var_dump(redis_cmd($url, 'GET', $prefix . $key) === $lock->token());
var_dump(redis_cmd($url, 'EXISTS', $key));       // not at the bare key
$pttl = redis_cmd($url, 'PTTL', $prefix . $key);
var_dump($pttl > 9000 && $pttl <= 10000);

// The same name without prefix is a different lock.
var_dump($plain->acquire());
var_dump(redis_cmd($url, 'GET', $key) === $plain->token());
var_dump($plain->token() !== $lock->token());
var_dump($plain->release());

var_dump($lock->isAcquired());
var_dump($lock->release());
var_dump(redis_cmd($url, 'EXISTS', $prefix . $key));

// Binary-safe key.
$bin = $key . ":\x00\xff é";
$b = new RedisLock($bin, 10, $url, ['prefix' => $prefix]);
var_dump($b->key() === $bin);
var_dump($b->acquire());
var_dump(redis_cmd($url, 'GET', $prefix . $bin) === $b->token());
var_dump($b->release());
var_dump(redis_cmd($url, 'EXISTS', $prefix . $bin));
?>
--EXPECT--
bool(true)
bool(true)
bool(true)
bool(true)
bool(true)
int(0)
bool(true)
bool(true)
bool(true)
bool(true)
bool(true)
bool(true)
bool(true)
int(0)
bool(true)
bool(true)
bool(true)
bool(true)
int(0)

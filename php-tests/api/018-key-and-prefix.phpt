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

$plain = redislock_test_lock($key, 10);
var_dump($plain->key() === $key);

$lock = redislock_test_lock($key, 10, ['prefix' => $prefix]);
var_dump($lock->key() === $key);
var_dump($lock->acquire());
var_dump($lock->key() === $key);
var_dump(redis_cmd($url, 'GET', redislock_test_stored_key($key, $prefix)) === $lock->token());
var_dump(redis_cmd($url, 'EXISTS', redislock_test_stored_key($key)));       // not at the bare key
$pttl = redis_cmd($url, 'PTTL', redislock_test_stored_key($key, $prefix));
var_dump($pttl > 2000 && $pttl <= 10000);

// The same name without prefix is a different lock.
var_dump($plain->acquire());
var_dump(redis_cmd($url, 'GET', redislock_test_stored_key($key)) === $plain->token());
var_dump($plain->token() !== $lock->token());
var_dump($plain->release());

var_dump($lock->isAcquired());
var_dump($lock->release());
var_dump(redis_cmd($url, 'EXISTS', redislock_test_stored_key($key, $prefix)));

// Binary-safe key.
$bin = $key . ":\x00\xff é";
$b = redislock_test_lock($bin, 10, ['prefix' => $prefix]);
var_dump($b->key() === $bin);
var_dump($b->acquire());
var_dump(redis_cmd($url, 'GET', redislock_test_stored_key($bin, $prefix)) === $b->token());
var_dump($b->release());
var_dump(redis_cmd($url, 'EXISTS', redislock_test_stored_key($bin, $prefix)));
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

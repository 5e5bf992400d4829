--TEST--
acquire() writes a fresh 128-bit token with SET NX PX; release() deletes it
--EXTENSIONS--
redislock
--SKIPIF--
<?php require __DIR__ . '/../skipif.inc'; ?>
--FILE--
<?php
require __DIR__ . '/../config.inc';
$url = redislock_test_url();
$key = redislock_test_key('acquire');
$lock = redislock_test_lock($key, 10);
var_dump($lock->token());
var_dump($lock->acquire());
$token = $lock->token();
var_dump(strlen($token), (bool) preg_match("/^[0-9a-f]{32}$/", $token));
var_dump(redis_cmd($url, 'GET', redislock_test_stored_key($key)) === $token);
$pttl = redis_cmd($url, 'PTTL', redislock_test_stored_key($key));
// PX 10 s; generous below (valgrind on a loaded machine took over 1 s here).
var_dump($pttl > 2000 && $pttl <= 10000);
var_dump($lock->release());
var_dump(redis_cmd($url, 'EXISTS', redislock_test_stored_key($key)));
var_dump($lock->token());
var_dump($lock->release());
var_dump($lock->acquire());
var_dump($lock->token() !== $token);
var_dump($lock->release());
?>
--EXPECT--
NULL
bool(true)
int(32)
bool(true)
bool(true)
bool(true)
bool(true)
int(0)
NULL
bool(false)
bool(true)
bool(true)
bool(true)

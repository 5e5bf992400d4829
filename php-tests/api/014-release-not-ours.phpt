--TEST--
release() of a lock whose key was overwritten by someone else returns false and leaves their key
--EXTENSIONS--
redislock
--SKIPIF--
<?php require __DIR__ . '/../skipif.inc'; ?>
--FILE--
<?php
require __DIR__ . '/../config.inc';
$url = redislock_test_url();
$key = redislock_test_key('release-not-ours');

$lock = redislock_test_lock($key, 10);
var_dump($lock->acquire());
$mine = $lock->token();
// Our lease "expired" and someone else took the lock.
var_dump(redis_cmd($url, 'SET', redislock_test_stored_key($key), 'intruder', 'PX', '10000'));
var_dump($lock->release());
var_dump(redis_cmd($url, 'GET', redislock_test_stored_key($key)));
$pttl = redis_cmd($url, 'PTTL', redislock_test_stored_key($key));
var_dump($pttl > 2000 && $pttl <= 10000);
var_dump($lock->token());
var_dump($lock->isAcquired());
var_dump($lock->release());
var_dump(redis_cmd($url, 'GET', redislock_test_stored_key($key)));

// Our key deleted behind our back: release() is false and creates nothing.
redis_cmd($url, 'DEL', redislock_test_stored_key($key));
var_dump($lock->acquire());
redis_cmd($url, 'DEL', redislock_test_stored_key($key));
var_dump($lock->release());
var_dump(redis_cmd($url, 'EXISTS', redislock_test_stored_key($key)));
?>
--EXPECT--
bool(true)
string(2) "OK"
bool(false)
string(8) "intruder"
bool(true)
NULL
bool(false)
bool(false)
string(8) "intruder"
bool(true)
bool(false)
int(0)

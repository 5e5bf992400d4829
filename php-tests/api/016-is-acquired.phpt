--TEST--
isAcquired() asks Redis: true while held, false when never acquired, released, deleted or overwritten
--EXTENSIONS--
redislock
--SKIPIF--
<?php require __DIR__ . '/../skipif.inc'; ?>
--FILE--
<?php
require __DIR__ . '/../config.inc';
$url = redislock_test_url();
$key = redislock_test_key('is-acquired');

$lock = redislock_test_lock($key, 10);
var_dump($lock->isAcquired());                   // never acquired
var_dump($lock->acquire());
var_dump($lock->isAcquired());
var_dump($lock->isAcquired());                   // asking does not change anything
var_dump(redis_cmd($url, 'GET', redislock_test_stored_key($key)) === $lock->token());
var_dump(redis_cmd($url, 'DEL', redislock_test_stored_key($key)));          // deleted behind our back
var_dump($lock->isAcquired());
var_dump(redis_cmd($url, 'EXISTS', redislock_test_stored_key($key)));

var_dump($lock->acquire());
redis_cmd($url, 'SET', redislock_test_stored_key($key), 'other', 'PX', '10000');   // overwritten
var_dump($lock->isAcquired());
var_dump(redis_cmd($url, 'GET', redislock_test_stored_key($key)));
redis_cmd($url, 'DEL', redislock_test_stored_key($key));

var_dump($lock->acquire());
var_dump($lock->release());
var_dump($lock->isAcquired());                   // released
var_dump(redis_cmd($url, 'EXISTS', redislock_test_stored_key($key)));
?>
--EXPECT--
bool(false)
bool(true)
bool(true)
bool(true)
bool(true)
int(1)
bool(false)
int(0)
bool(true)
bool(false)
string(5) "other"
bool(true)
bool(true)
bool(false)
int(0)

--TEST--
forceRelease() deletes the lock whoever holds it, returns false when there is none, and clears our hold
--EXTENSIONS--
redislock
--SKIPIF--
<?php require __DIR__ . '/../skipif.inc'; ?>
--FILE--
<?php
require __DIR__ . '/../config.inc';
$url = redislock_test_url();
$key = redislock_test_key('force-release');

$lock = redislock_test_lock($key, 10);
// Another owner's lock.
redis_cmd($url, 'SET', redislock_test_stored_key($key), 'other-owner', 'PX', '10000');
var_dump($lock->forceRelease());
var_dump(redis_cmd($url, 'EXISTS', redislock_test_stored_key($key)));
var_dump($lock->forceRelease());                 // nothing left to delete
var_dump(redis_cmd($url, 'EXISTS', redislock_test_stored_key($key)));

// Our own lock.
var_dump($lock->acquire());
var_dump(is_string($lock->token()));
var_dump($lock->forceRelease());
var_dump(redis_cmd($url, 'EXISTS', redislock_test_stored_key($key)));
var_dump($lock->token());
var_dump($lock->isAcquired());
var_dump($lock->release());

// Another object on the key can take it at once afterwards.
var_dump($lock->acquire());
$other = redislock_test_lock($key, 10);
var_dump($other->forceRelease());
var_dump(redis_cmd($url, 'EXISTS', redislock_test_stored_key($key)));
var_dump($lock->isAcquired());
var_dump($lock->release());
var_dump($lock->token());
?>
--EXPECT--
bool(true)
int(0)
bool(false)
int(0)
bool(true)
bool(true)
bool(true)
int(0)
NULL
bool(false)
bool(false)
bool(true)
bool(true)
int(0)
bool(false)
bool(false)
NULL

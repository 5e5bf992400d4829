--TEST--
acquire() returns false at once and changes nothing while another owner's token is in the key
--EXTENSIONS--
redislock
--SKIPIF--
<?php require __DIR__ . '/../skipif.inc'; ?>
--FILE--
<?php
require __DIR__ . '/../config.inc';
$url = redislock_test_url();
$key = redislock_test_key('held-elsewhere');
$other = 'token-of-another-owner';
var_dump(redis_cmd($url, 'SET', redislock_test_stored_key($key), $other, 'PX', '10000'));

$lock = redislock_test_lock($key, 5);
$t0 = microtime(true);
var_dump($lock->acquire());
var_dump(microtime(true) - $t0 < 0.5);           // wait 0: one try, no blocking
var_dump($lock->token());
var_dump(redis_cmd($url, 'GET', redislock_test_stored_key($key)) === $other);
$pttl = redis_cmd($url, 'PTTL', redislock_test_stored_key($key));
var_dump($pttl > 2000 && $pttl <= 10000);        // the other's lease untouched
var_dump($lock->isAcquired());
var_dump($lock->remainingTtl());
var_dump($lock->release());                      // not ours: false, deletes nothing
var_dump(redis_cmd($url, 'GET', redislock_test_stored_key($key)) === $other);

// Once the other owner is gone the same object can take it.
var_dump(redis_cmd($url, 'DEL', redislock_test_stored_key($key)));
var_dump($lock->acquire());
var_dump(redis_cmd($url, 'GET', redislock_test_stored_key($key)) === $lock->token());
var_dump($lock->release());
var_dump(redis_cmd($url, 'EXISTS', redislock_test_stored_key($key)));
?>
--EXPECT--
string(2) "OK"
bool(false)
bool(true)
NULL
bool(true)
bool(true)
bool(false)
NULL
bool(false)
bool(true)
int(1)
bool(true)
bool(true)
bool(true)
int(0)

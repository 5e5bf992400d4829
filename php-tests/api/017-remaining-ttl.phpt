--TEST--
remainingTtl() is the seconds left on our lease as a float, null when not held or lost
--EXTENSIONS--
redislock
--SKIPIF--
<?php require __DIR__ . '/../skipif.inc'; ?>
--FILE--
<?php
require __DIR__ . '/../config.inc';
$url = redislock_test_url();
$key = redislock_test_key('remaining-ttl');

$lock = redislock_test_lock($key, 5);
var_dump($lock->remainingTtl());                 // not held
var_dump($lock->acquire());
$r = $lock->remainingTtl();
var_dump(is_float($r));
var_dump($r > 4.5 && $r <= 5.0);
// It agrees with Redis.
var_dump(abs($r - redis_cmd($url, 'PTTL', redislock_test_stored_key($key)) / 1000) < 0.2);
var_dump($lock->refresh(1.5));
$r = $lock->remainingTtl();
var_dump($r > 1.0 && $r <= 1.5);
// Sub-second precision (not rounded to whole seconds).
redis_cmd($url, 'PEXPIRE', redislock_test_stored_key($key), '750');
$r = $lock->remainingTtl();
var_dump($r > 0.5 && $r <= 0.75);

redis_cmd($url, 'SET', redislock_test_stored_key($key), 'other', 'PX', '10000'); // lost to someone else
var_dump($lock->remainingTtl());
redis_cmd($url, 'DEL', redislock_test_stored_key($key));
var_dump($lock->remainingTtl());                 // lost: key gone

var_dump($lock->acquire());
var_dump($lock->release());
var_dump($lock->remainingTtl());                 // released
?>
--EXPECT--
NULL
bool(true)
bool(true)
bool(true)
bool(true)
bool(true)
bool(true)
bool(true)
NULL
NULL
bool(true)
bool(true)
NULL

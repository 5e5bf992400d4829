--TEST--
The lock key holds the plain token: a hand-written Lua compare-and-delete and a plain SET NX PX interoperate
--EXTENSIONS--
redislock
--SKIPIF--
<?php require __DIR__ . '/../skipif.inc'; ?>
--FILE--
<?php
require __DIR__ . '/../config.inc';
$url = redislock_test_url();
$key = redislock_test_key('interop');
$cad = "if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) else return 0 end";

$lock = redislock_test_lock($key, 10);
var_dump($lock->acquire());
$token = $lock->token();
var_dump(redis_cmd($url, 'TYPE', redislock_test_stored_key($key)));
var_dump(redis_cmd($url, 'GET', redislock_test_stored_key($key)) === $token);
var_dump(redis_cmd($url, 'EVAL', $cad, '1', redislock_test_stored_key($key), 'not-the-token'));
var_dump(redis_cmd($url, 'EXISTS', redislock_test_stored_key($key)));
var_dump(redis_cmd($url, 'EVAL', $cad, '1', redislock_test_stored_key($key), $token));
var_dump(redis_cmd($url, 'EXISTS', redislock_test_stored_key($key)));
var_dump($lock->isAcquired());
var_dump($lock->release());

// The other way round: a lock taken by a seed recipe, adopted and released.
$theirs = 'recipe-' . bin2hex(random_bytes(8));
var_dump(redis_cmd($url, 'SET', redislock_test_stored_key($key), $theirs, 'NX', 'PX', '10000'));
$adopted = redislock_test_restore($key, $theirs, 10);
var_dump($adopted->isAcquired());
var_dump($adopted->refresh(20));
$pttl = redis_cmd($url, 'PTTL', redislock_test_stored_key($key));
var_dump($pttl > 19000 && $pttl <= 20000);
var_dump($adopted->release());
var_dump(redis_cmd($url, 'EXISTS', redislock_test_stored_key($key)));
?>
--EXPECT--
bool(true)
string(6) "string"
bool(true)
int(0)
int(1)
int(1)
int(0)
bool(false)
bool(false)
string(2) "OK"
bool(true)
bool(true)
bool(true)
bool(true)
int(0)

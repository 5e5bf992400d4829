--TEST--
Reentrancy: acquiring a key this process already holds succeeds at once, is counted, Redis released at the last release
--EXTENSIONS--
redislock
--SKIPIF--
<?php require __DIR__ . '/../skipif.inc'; ?>
--FILE--
<?php
require __DIR__ . '/../config.inc';
$url = redislock_test_url();

echo "-- two objects, inner released first\n";
$key = redislock_test_key('reentrant-a');
$a = redislock_test_lock($key, 10);
$b = redislock_test_lock($key, 10);
var_dump($a->acquire());
$t0 = microtime(true);
var_dump($b->acquire(2.0));
var_dump(microtime(true) - $t0 < 0.5);           // at once, no waiting
var_dump($b->token() === $a->token());
var_dump(redis_cmd($url, 'GET', redislock_test_stored_key($key)) === $a->token());
var_dump($b->isAcquired());
var_dump($b->release());
var_dump(redis_cmd($url, 'GET', redislock_test_stored_key($key)) === $a->token());   // still held
var_dump($a->isAcquired());
var_dump($a->release());
var_dump(redis_cmd($url, 'EXISTS', redislock_test_stored_key($key)));
var_dump($a->release());                         // more releases than acquires
var_dump($b->release());
var_dump(redis_cmd($url, 'EXISTS', redislock_test_stored_key($key)));

echo "-- two objects, outer released first\n";
$key = redislock_test_key('reentrant-b');
$a = redislock_test_lock($key, 10);
$b = redislock_test_lock($key, 10);
var_dump($a->acquire());
var_dump($b->acquire());
var_dump($a->release());
var_dump(redis_cmd($url, 'GET', redislock_test_stored_key($key)) === $b->token());
var_dump($b->release());
var_dump(redis_cmd($url, 'EXISTS', redislock_test_stored_key($key)));
var_dump($b->release());

echo "-- one object acquired twice\n";
$key = redislock_test_key('reentrant-c');
$c = redislock_test_lock($key, 10);
var_dump($c->acquire());
$token = $c->token();
var_dump($c->acquire());
var_dump($c->token() === $token);
var_dump($c->release());
var_dump(redis_cmd($url, 'GET', redislock_test_stored_key($key)) === $token);
var_dump($c->release());
var_dump(redis_cmd($url, 'EXISTS', redislock_test_stored_key($key)));
var_dump($c->release());
?>
--EXPECT--
-- two objects, inner released first
bool(true)
bool(true)
bool(true)
bool(true)
bool(true)
bool(true)
bool(true)
bool(true)
bool(true)
bool(true)
int(0)
bool(false)
bool(false)
int(0)
-- two objects, outer released first
bool(true)
bool(true)
bool(true)
bool(true)
bool(true)
int(0)
bool(false)
-- one object acquired twice
bool(true)
bool(true)
bool(true)
bool(true)
bool(true)
bool(true)
int(0)
bool(false)

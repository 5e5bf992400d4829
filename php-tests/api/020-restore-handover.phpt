--TEST--
restore() adopts a hold made by another process from its key and token
--EXTENSIONS--
redislock
--SKIPIF--
<?php require __DIR__ . '/../skipif.inc'; ?>
--FILE--
<?php
require __DIR__ . '/../config.inc';
$url = redislock_test_url();
$key = redislock_test_key('restore');

[$code, $out] = redislock_run_child(sprintf(
    '$l = new RedisLock(%s, 10, %s, %s);
     if (!$l->acquire()) { echo "acquire failed"; exit(1); }
     echo $l->token();',
    var_export($key, true), var_export(redislock_test_servers(), true),
    var_export(redislock_test_options(['auto_release' => false]), true)));
var_dump($code);
$token = trim($out);
var_dump((bool) preg_match('/^[0-9a-f]{32}$/', $token));
var_dump(redis_cmd($url, 'GET', redislock_test_stored_key($key)) === $token);   // outlived its process

// A wrong token adopts nothing.
$fake = redislock_test_restore($key, str_repeat('0', 32), 10);
var_dump($fake->isAcquired());
var_dump($fake->release());
var_dump(redis_cmd($url, 'GET', redislock_test_stored_key($key)) === $token);

$lock = redislock_test_restore($key, $token, 10);
var_dump($lock instanceof RedisLock);
var_dump($lock->key() === $key);
var_dump($lock->token() === $token);
var_dump($lock->isAcquired());
var_dump($lock->refresh(20));
$pttl = redis_cmd($url, 'PTTL', redislock_test_stored_key($key));
var_dump($pttl > 19000 && $pttl <= 20000);
$r = $lock->remainingTtl();
var_dump($r > 19.0 && $r <= 20.0);
var_dump(redis_cmd($url, 'GET', redislock_test_stored_key($key)) === $token);
var_dump($lock->release());
var_dump(redis_cmd($url, 'EXISTS', redislock_test_stored_key($key)));
var_dump($lock->token());
?>
--EXPECT--
int(0)
bool(true)
bool(true)
bool(false)
bool(false)
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
NULL

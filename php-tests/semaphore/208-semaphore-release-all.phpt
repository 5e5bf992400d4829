--TEST--
Semaphore: RedisLock::releaseAll() gives back the permits request end would (auto_release), counts them with the locks, and leaves auto_release => false permits with their objects
--EXTENSIONS--
redislock
--SKIPIF--
<?php require __DIR__ . '/../skipif.inc'; if (getenv('REDISLOCK_TEST_TOPOLOGY') === 'redlock') die('skip semaphores refuse Redlock'); ?>
--FILE--
<?php
require __DIR__ . '/../config.inc';
use RedisLock\Semaphore;
$url = redislock_test_url();
$name = redislock_test_key('sem-release-all');
$holders = redislock_test_stored_key($name) . '~~s';
$servers = redislock_test_servers();

$a = new Semaphore($name, 3, 30, $servers, redislock_test_options());
$b = new Semaphore($name, 3, 30, $servers, redislock_test_options());
$kept = new Semaphore($name, 3, 30, $servers, redislock_test_options(['auto_release' => false]));
$lock = redislock_test_lock(redislock_test_key('sem-release-all-lock'), 30);
var_dump($a->acquire(), $b->acquire(), $kept->acquire(), $lock->acquire());
echo "holders before: ", redis_cmd($url, 'ZCOUNT', $holders, '(0', '+inf'), "\n";

// Two permits and one lock end; the auto_release => false permit stays.
var_dump(RedisLock::releaseAll());
echo "holders after: ", redis_cmd($url, 'ZCOUNT', $holders, '(0', '+inf'), "\n";
var_dump($a->isAcquired(), $a->release(), $kept->isAcquired(), $lock->isAcquired());
var_dump(RedisLock::releaseAll());

// The freed permits can be taken again; the kept one is released by its object.
var_dump($a->acquire(), $kept->release(), $a->release());
echo "holders at the end: ", redis_cmd($url, 'ZCOUNT', $holders, '(0', '+inf'), "\n";
?>
--EXPECT--
bool(true)
bool(true)
bool(true)
bool(true)
holders before: 3
int(3)
holders after: 1
bool(false)
bool(false)
bool(true)
bool(false)
int(0)
bool(true)
bool(true)
bool(true)
holders at the end: 0

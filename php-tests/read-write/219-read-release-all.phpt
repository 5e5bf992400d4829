--TEST--
Read holds: RedisLock::releaseAll() releases the read holds request end would (auto_release), counts them with the locks, and leaves auto_release => false read holds with their objects
--EXTENSIONS--
redislock
--SKIPIF--
<?php require __DIR__ . '/../skipif.inc'; ?>
--FILE--
<?php
require __DIR__ . '/../config.inc';
$url = redislock_test_url();
$key = redislock_test_key('read-release-all');
$other = redislock_test_key('read-release-all-write');

$a = new RedisLock($key, 30, $url);
$b = new RedisLock($key, 30, $url);
$kept = new RedisLock($key, 30, $url, ['auto_release' => false]);
$writer = new RedisLock($other, 30, $url);
var_dump($a->acquireRead(), $b->acquireRead(), $kept->acquireRead(), $writer->acquire());
echo "readers before: ", redis_readers($url, $key), "\n";

// Two read holds and one write hold end; the auto_release => false reader stays.
var_dump(RedisLock::releaseAll());
echo "readers after: ", redis_readers($url, $key), ", lock ", redis_cmd($url, 'GET', $key), "\n";
var_dump($a->isAcquired(), $a->release(), $kept->isAcquired(), $writer->isAcquired());
var_dump(RedisLock::releaseAll());

// The objects read again; the kept one is released by its object, the last
// release frees the lock.
var_dump($a->acquireRead(), $kept->release(), $a->release());
echo "left: ", json_encode(redis_keys_left($url, "$key*")), "\n";
?>
--EXPECT--
bool(true)
bool(true)
bool(true)
bool(true)
readers before: 3
int(3)
readers after: 1, lock ~~read
bool(false)
bool(false)
bool(true)
bool(false)
int(0)
bool(true)
bool(true)
bool(true)
left: []

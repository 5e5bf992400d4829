--TEST--
After the Redis server restarts, the next acquire works transparently on a new pooled connection
--EXTENSIONS--
redislock
--SKIPIF--
<?php require __DIR__ . '/../skipif.inc'; ?>
--FILE--
<?php
require __DIR__ . '/../config.inc';
$redis = TestRedis::start();
$url = $redis->url();
$key = redislock_test_key('restart');
$lock = new RedisLock($key, 5, $url);
var_dump($lock->acquire());
var_dump($lock->release());

$redis->restart();
// redis_cmd's own connection died too: use a fresh URL string for it.
$check = $url . '/0';
$t = microtime(true);
var_dump($lock->acquire());
$elapsed = microtime(true) - $t;
echo $elapsed < 1.0 ? "fast\n" : "slow: $elapsed\n";
var_dump(redis_cmd($check, 'GET', $key) === $lock->token());
var_dump($lock->isAcquired());
var_dump($lock->release());
var_dump(redis_cmd($check, 'EXISTS', $key));
// The extension holds exactly one connection to the new server (every
// client but the one asking CLIENT LIST).
$clients = redis_cmd($check, 'CLIENT', 'LIST');
echo "extension connections: ", count(preg_grep('/ cmd=client\|list /', explode("\n", trim($clients)), PREG_GREP_INVERT)), "\n";

// A restart while the lock is held: the hold is gone with the data, and
// the lock can be taken again.
var_dump($lock->acquire());
$redis->restart();
$check2 = $url . '/';
var_dump($lock->isAcquired());
var_dump($lock->release());
var_dump($lock->acquire());
var_dump(redis_cmd($check2, 'GET', $key) === $lock->token());
var_dump($lock->release());
?>
--EXPECT--
bool(true)
bool(true)
bool(true)
fast
bool(true)
bool(true)
bool(true)
int(0)
extension connections: 1
bool(true)
bool(false)
bool(false)
bool(true)
bool(true)
bool(true)

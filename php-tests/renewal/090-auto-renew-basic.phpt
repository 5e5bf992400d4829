--TEST--
auto_renew keeps a short lease alive across its ttl, then release stops it (also run under valgrind)
--EXTENSIONS--
redislock
--SKIPIF--
<?php require __DIR__ . '/../skipif.inc'; ?>
--FILE--
<?php
require __DIR__ . '/../config.inc';
$url = redislock_test_url();
$key = redislock_test_key('renew-basic');
// 0.6 s: short, yet renewals every 0.2 s keep it under valgrind too.
$lock = new RedisLock($key, 0.6, $url, ['auto_renew' => true]);
var_dump($lock->acquire());
$token = $lock->token();
// Three times the ttl: without renewal the key would be gone.
$deadline = microtime(true) + 1.8;
$alive = true;
while (microtime(true) < $deadline) {
    $alive = $alive && redis_cmd($url, 'GET', $key) === $token;
    usleep(50000);
}
var_dump($alive);
var_dump($lock->isAcquired());
var_dump($lock->release());
var_dump(redis_cmd($url, 'EXISTS', $key));
// A second hold in the same process reuses the running renewal thread.
var_dump($lock->acquire(), $lock->release());
?>
--EXPECT--
bool(true)
bool(true)
bool(true)
bool(true)
int(0)
bool(true)
bool(true)

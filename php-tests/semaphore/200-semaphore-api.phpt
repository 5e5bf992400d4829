--TEST--
Semaphore: N permits, one round trip when free, leases of their own, permits disagreement, var_dump
--EXTENSIONS--
redislock
--SKIPIF--
<?php require __DIR__ . '/../skipif.inc'; if (getenv('REDISLOCK_TEST_TOPOLOGY') === 'redlock') die('skip semaphores refuse Redlock'); ?>
--FILE--
<?php
require __DIR__ . '/../config.inc';
use RedisLock\Semaphore;
$url = redislock_test_url();
$name = redislock_test_key('sem-api');
$holders = redislock_test_stored_key($name) . '~~s';
$sem = fn(int $n = 2, float $ttl = 10) => new Semaphore($name, $n, $ttl, redislock_test_servers(), redislock_test_options());

$a = $sem(); $b = $sem(); $c = $sem();
var_dump($a->isAcquired(), $a->remainingTtl(), $a->release(), $a->refresh());
// Round trips are counted on a server of this test's own: the shared test
// server also runs the EVALSHAs of the tests beside this one.
$own = TestRedis::start();
$counted = new Semaphore($name, 2, 10, $own->url());
$warm = new Semaphore($name, 2, 10, $own->url());
var_dump($warm->acquire() && $warm->release());   // scripts loaded, ACL asked
$calls = redis_calls($own->url(), 'evalsha');
var_dump($counted->acquire());
echo "round trips for a free permit: ", redis_calls($own->url(), 'evalsha') - $calls, "\n";
var_dump($counted->release());
var_dump($a->acquire(), $b->acquire(), $c->acquire());
var_dump(redis_cmd($url, 'ZCOUNT', $holders, '(0', '+inf'));
var_dump($a->isAcquired());
$left = $a->remainingTtl();
var_dump($left > 9 && $left <= 10);
var_dump($a->refresh(20));
$left = $a->remainingTtl();
var_dump($left > 19 && $left <= 20);
try {
    $a->acquire();
} catch (RedisLock\LockException $e) {
    echo get_class($e), ': ', $e->getMessage(), "\n";
}
try {
    $sem(5)->acquire();
} catch (RedisLock\LockException $e) {
    echo get_class($e), ': ', $e->getMessage(), "\n";
}
var_dump($a->release(), $a->release(), $a->isAcquired());
var_dump($c->acquire(), $b->release(), $c->release());
var_dump(redis_keys_left($url, "$holders*"));

// A short lease ends by itself: the permit is no longer ours.
$short = $sem(1, 0.1);
$other = $sem(1, 0.1);
var_dump($short->acquire(), $other->acquire());
usleep(700000);   // the lease and the 0.5 s clock grace
var_dump($short->isAcquired(), $short->refresh(), $other->acquire(), $other->release());

$d = new Semaphore($name, 3, 5, 'redis://user:s3cret@127.0.0.1:1', ['prefix' => 'p:']);
var_dump($d);
var_dump(str_contains(print_r($d, true), 's3cret'));
try {
    clone $d;
} catch (Error $e) {
    echo get_class($e), "\n";
}
?>
--EXPECTF--
bool(false)
NULL
bool(false)
bool(false)
bool(true)
bool(true)
round trips for a free permit: 1
bool(true)
bool(true)
bool(true)
bool(false)
int(2)
bool(true)
bool(true)
bool(true)
bool(true)
RedisLock\LockException: this RedisLock\Semaphore object already holds a permit of "%s"; release it first, or use another object for another permit
RedisLock\LockException: semaphore "%s" has 2 permits in Redis, but this object was built with 5: every user of one semaphore must pass the same $permits
bool(true)
bool(false)
bool(false)
bool(true)
bool(true)
bool(true)
array(0) {
}
bool(true)
bool(false)
bool(false)
bool(false)
bool(true)
bool(true)
object(RedisLock\Semaphore)#%d (6) {
  ["name"]=>
  string(%d) "%s"
  ["redisKey"]=>
  string(%d) "p:%s~~s"
  ["permits"]=>
  int(3)
  ["ttl"]=>
  float(5)
  ["servers"]=>
  array(1) {
    [0]=>
    string(%d) "redis://user:***@127.0.0.1:1/0"
  }
  ["acquired"]=>
  bool(false)
}
bool(false)
Error

--TEST--
Semaphore::withPermit(): returns the callback's value, passes its exception on unchanged, gives the permit back in every case
--EXTENSIONS--
redislock
--SKIPIF--
<?php require __DIR__ . '/../skipif.inc'; if (getenv('REDISLOCK_TEST_TOPOLOGY') === 'redlock') die('skip semaphores refuse Redlock'); ?>
--FILE--
<?php
require __DIR__ . '/../config.inc';
use RedisLock\Semaphore;
$url = redislock_test_url();
$name = redislock_test_key('sem-with');
$holders = redislock_test_stored_key($name) . '~~s';
$sem = fn(float $ttl = 10) => new Semaphore($name, 1, $ttl, redislock_test_servers(), redislock_test_options());
$s = $sem();
var_dump($s->withPermit(function ($arg) use ($s, $url, $holders) {
    return [$arg === $s, $s->isAcquired(), redis_cmd($url, 'ZCOUNT', $holders, '(0', '+inf')];
}));
var_dump($s->isAcquired(), redis_cmd($url, 'ZCOUNT', $holders, '(0', '+inf'));
try {
    $s->withPermit(function () { throw new DomainException('from the callback', 7); });
} catch (DomainException $e) {
    echo get_class($e), ': ', $e->getMessage(), ' ', $e->getCode(), "\n";
}
var_dump($s->isAcquired(), redis_cmd($url, 'ZCOUNT', $holders, '(0', '+inf'));

// Full: TimeoutException after $wait, the holder keeps its permit.
$holder = $sem();
var_dump($holder->acquire());
$t = hrtime(true);
show_outcome(fn() => $s->withPermit(fn() => 'never', 0.3));
$took = (hrtime(true) - $t) / 1e9;
var_dump($took >= 0.29 && $took < 2);
var_dump($holder->isAcquired());
var_dump($holder->release());

// The callback gives the permit back itself: no error.
var_dump($s->withPermit(fn(Semaphore $x) => $x->release()));

// The lease ends while the callback runs: LockLostException after it.
$short = $sem(0.1);
show_outcome(fn() => $short->withPermit(function () { usleep(200000); return 1; }));
var_dump(redis_keys_left($url, "$holders*"));
?>
--EXPECTF--
array(3) {
  [0]=>
  bool(true)
  [1]=>
  bool(true)
  [2]=>
  int(1)
}
bool(false)
int(0)
DomainException: from the callback 7
bool(false)
int(0)
bool(true)
RedisLock\TimeoutException: could not acquire a permit of semaphore "%s" within 0.3 s
bool(true)
bool(true)
bool(true)
bool(true)
RedisLock\LockLostException: the permit of semaphore "%s" was lost while held: the lease ended before withPermit() gave it back
array(0) {
}

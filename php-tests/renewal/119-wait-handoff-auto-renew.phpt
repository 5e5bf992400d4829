--TEST--
auto_renew on a lock obtained by handoff: the waiter that was handed the lock keeps it renewed
--EXTENSIONS--
redislock
--SKIPIF--
<?php require __DIR__ . '/../skipif.inc'; ?>
--FILE--
<?php
require __DIR__ . '/../config.inc';
require __DIR__ . '/../children.inc';
$url = redislock_test_url();
$key = redislock_test_key('handoff-renew');

$holder = spawn_php(sprintf('
    $l = new RedisLock(%s, 10, %s);
    if (!$l->acquire()) { echo "acquire failed\n"; exit(1); }
    echo "held\n";
    wait_until(fn () => redis_cmd(%2$s, "ZCARD", %1$s . "~~q") === 1);
    usleep(50000);
    echo $l->release() ? "released" : "release failed", "\n";',
    var_export($key, true), var_export($url, true)));
check('holder has it', read_line($holder) === 'held');

$lock = new RedisLock($key, 0.5, $url, ['auto_renew' => true]);
var_dump($lock->acquire(3.0));
$t0 = hrtime(true);
$token = $lock->token();
[$code, $out] = finish_php($holder);
check('holder released', $code === 0 && trim($out) === 'released', "$code: $out");
$owner_ok = true;
$min = PHP_INT_MAX;
while (since($t0) < 1.5) {                       // three times the 0.5 s lease
    $owner_ok = $owner_ok && redis_cmd($url, 'GET', $key) === $token;
    $min = min($min, redis_cmd($url, 'PTTL', $key));
    usleep(20000);
}
check('kept for 1.5 s', $owner_ok && $min > 0, "min pttl $min");
var_dump($lock->isAcquired());
var_dump($lock->release());
var_dump(redis_cmd($url, 'EXISTS', $key));
?>
--EXPECT--
holder has it: ok
bool(true)
holder released: ok
kept for 1.5 s: ok
bool(true)
bool(true)
int(0)

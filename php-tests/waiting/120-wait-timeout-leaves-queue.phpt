--TEST--
A waiter whose wait ran out leaves the queue: a later release deletes the lock instead of handing it to the departed waiter
--EXTENSIONS--
redislock
--SKIPIF--
<?php require __DIR__ . '/../skipif.inc'; ?>
--FILE--
<?php
require __DIR__ . '/../config.inc';
require __DIR__ . '/../children.inc';
$url = redislock_test_url();
$key = redislock_test_key('wait-timeout-queue');

$lock = new RedisLock($key, 10, $url);
var_dump($lock->acquire());
$waiter = spawn_php(sprintf('
    $l = new RedisLock(%s, 10, %s);
    $t0 = hrtime(true);
    $got = $l->acquire(0.3);
    printf("%%s %%.3f %%s\n", var_export($got, true), since($t0), var_export($l->token(), true));
    usleep(500000);                              // still alive when the parent releases',
    var_export($key, true), var_export($url, true)));
check('waiter queued', wait_until(fn () => redis_cmd($url, 'ZCARD', $key . '~~q') === 1));
[$got, $elapsed, $token] = explode(' ', read_line($waiter)) + ['', 0, ''];
check('the waiter timed out', $got === 'false' && $token === 'NULL');
check('after its 0.3 s wait', $elapsed >= 0.3 && $elapsed < 0.8, "$elapsed s");
var_dump((redis_cmd($url, 'EXISTS', $key . '~~q') + count(redis_cmd($url, 'KEYS', $key . '~~a~*'))));
var_dump(redis_cmd($url, 'KEYS', $key . '~~w~*'));
var_dump($lock->release());
var_dump(redis_cmd($url, 'EXISTS', $key));      // deleted, not handed over
[$code, $out] = finish_php($waiter);
check('waiter ended', $code === 0 && $out === '', "$code: $out");
?>
--EXPECT--
bool(true)
waiter queued: ok
the waiter timed out: ok
after its 0.3 s wait: ok
int(0)
array(0) {
}
bool(true)
int(0)
waiter ended: ok

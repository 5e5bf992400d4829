--TEST--
A lock handed over by a release gets the waiter's own ttl, not the releaser's, at once: the step sent behind the waiter's wake-up wait claims it as the waiter is woken
--EXTENSIONS--
redislock
--SKIPIF--
<?php require __DIR__ . '/../skipif.inc'; ?>
--FILE--
<?php
require __DIR__ . '/../config.inc';
require __DIR__ . '/../children.inc';
$url = redislock_test_url();
$key = redislock_test_key('handoff-ttl');

foreach ([[30, 2], [1, 20]] as [$holder_ttl, $waiter_ttl]) {
    $lock = new RedisLock($key, $holder_ttl, $url);
    var_dump($lock->acquire());
    $waiter = spawn_php(sprintf('
        $l = new RedisLock(%s, %d, %s);
        echo $l->acquire(3.0) ? "got" : "timed out", "\n";
        usleep(1500000);                         // hold while the parent looks
        $l->release();',
        var_export($key, true), $waiter_ttl, var_export($url, true)));
    check("waiter ($waiter_ttl s) queued", wait_until(fn () => redis_cmd($url, 'ZCARD', $key . '~~q') === 1));
    var_dump($lock->release());
    check('handed over', read_line($waiter) === 'got');
    // Not what the mark had left (2 x retry_delay + 0.5 s = 1.5 s at most):
    // the waiter's whole ttl, from the moment it was woken.
    $pttl = redis_cmd($url, 'PTTL', $key);
    check("the waiter's {$waiter_ttl} s", $pttl > $waiter_ttl * 1000 - 700 && $pttl <= $waiter_ttl * 1000, "pttl $pttl");
    [$code, $out] = finish_php($waiter);
    check('waiter done', $code === 0 && $out === '', "$code: $out");
    var_dump(redis_cmd($url, 'EXISTS', $key));
}
?>
--EXPECT--
bool(true)
waiter (2 s) queued: ok
bool(true)
handed over: ok
the waiter's 2 s: ok
waiter done: ok
int(0)
bool(true)
waiter (20 s) queued: ok
bool(true)
handed over: ok
the waiter's 20 s: ok
waiter done: ok
int(0)

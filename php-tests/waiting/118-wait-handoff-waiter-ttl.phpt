--TEST--
A lock handed over by a release gets the waiter's own ttl, not the releaser's: at first what the waiter's mark had left (at most its ttl), then its ttl, claimed in the background
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
    // The mark lives 2 x retry_delay + 0.5 s = 1.5 s after the waiter's last step.
    $pttl = redis_cmd($url, 'PTTL', $key);
    check('handed for at most the mark\'s life', $pttl > 0 && $pttl <= min($waiter_ttl, 1.5) * 1000, "pttl $pttl");
    check("then the waiter's {$waiter_ttl} s", wait_until(function () use ($url, $key, $waiter_ttl, &$pttl) {
        $pttl = redis_cmd($url, 'PTTL', $key);
        return $pttl > $waiter_ttl * 1000 - 700 && $pttl <= $waiter_ttl * 1000;
    }, 1.2), "pttl $pttl");
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
handed for at most the mark's life: ok
then the waiter's 2 s: ok
waiter done: ok
int(0)
bool(true)
waiter (20 s) queued: ok
bool(true)
handed over: ok
handed for at most the mark's life: ok
then the waiter's 20 s: ok
waiter done: ok
int(0)

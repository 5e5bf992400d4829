--TEST--
Waiters get the lock in the order they started waiting (FIFO), one after another
--EXTENSIONS--
redislock
--SKIPIF--
<?php require __DIR__ . '/../skipif.inc'; ?>
--FILE--
<?php
require __DIR__ . '/../config.inc';
require __DIR__ . '/../children.inc';
$url = redislock_test_url();
$key = redislock_test_key('fifo');
$order = redislock_test_key('fifo-order');

$holder = new RedisLock($key, 10, $url);
var_dump($holder->acquire());

$waiters = [];
for ($i = 0; $i < 4; $i++) {
    $waiters[] = spawn_php(sprintf('
        $url = %s; $key = %s;
        $l = new RedisLock($key, 10, $url);
        if (!$l->acquire(3.0)) { echo "timed out\n"; exit(1); }
        redis_cmd($url, "RPUSH", %s, "%d");
        usleep(20000);
        echo $l->release() ? "ok" : "release failed", "\n";',
        var_export($url, true), var_export($key, true), var_export($order, true), $i));
    // The next one starts only once this one is in the queue.
    check("waiter $i queued", wait_until(fn () => redis_cmd($url, 'ZCARD', $key . '~~q') === $i + 1));
}
var_dump(redis_cmd($url, 'LLEN', $order));       // nobody got it while we hold it
$t0 = hrtime(true);
var_dump($holder->release());
foreach ($waiters as $i => $w) {
    [$code, $out] = finish_php($w);
    check("waiter $i ended", $code === 0 && trim($out) === 'ok', "exit $code: $out");
}
echo implode(',', redis_cmd($url, 'LRANGE', $order, '0', '-1')), "\n";
// Four handoffs of ~20 ms holds: nowhere near 4 fallback periods (2 s).
check('all served quickly', since($t0) < 1.2, sprintf('%.3f s', since($t0)));
var_dump(redis_keys_left($url, $key . '*'));   // lock, queue, info, wake lists: all gone
redis_cmd($url, 'DEL', $order);
?>
--EXPECT--
bool(true)
waiter 0 queued: ok
waiter 1 queued: ok
waiter 2 queued: ok
waiter 3 queued: ok
int(0)
bool(true)
waiter 0 ended: ok
waiter 1 ended: ok
waiter 2 ended: ok
waiter 3 ended: ok
0,1,2,3
all served quickly: ok
array(0) {
}

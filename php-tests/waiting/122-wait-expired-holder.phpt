--TEST--
Queued waiters notice a holder whose lease expired without a release: the first waiter gets the lock right after the expiry, the next one after it
--EXTENSIONS--
redislock
--SKIPIF--
<?php require __DIR__ . '/../skipif.inc'; ?>
--FILE--
<?php
require __DIR__ . '/../config.inc';
require __DIR__ . '/../children.inc';
$url = redislock_test_url();
$key = redislock_test_key('expired-holder');
$order = redislock_test_key('expired-holder-order');

// A holder that died: its lease ends in 0.8 s and nobody will release it.
redis_cmd($url, 'SET', $key, 'dead-holder', 'PX', '800');
$t_expiry = hrtime(true) + 800_000_000;
$waiters = [];
for ($i = 0; $i < 2; $i++) {
    $waiters[] = spawn_php(sprintf('
        $url = %s;
        $l = new RedisLock(%s, 10, $url);           // default retry_delay 0.5 s
        if (!$l->acquire(3.0)) { echo "timed out\n"; exit(1); }
        $t = hrtime(true);
        redis_cmd($url, "RPUSH", %s, "%d");
        usleep(200000);
        $l->release();
        echo $t, "\n";',
        var_export($url, true), var_export($key, true), var_export($order, true), $i));
    check("waiter $i queued", wait_until(fn () => redis_cmd($url, 'ZCARD', $key . '~~q') === $i + 1));
}
$at = [];
foreach ($waiters as $i => $w) {
    [$code, $out] = finish_php($w);
    check("waiter $i done", $code === 0 && is_numeric(trim($out)), "$code: $out");
    $at[$i] = ((int) trim($out) - $t_expiry) / 1e9;
}
echo implode(',', redis_cmd($url, 'LRANGE', $order, '0', '-1')), "\n";
check('the first waiter soon after the expiry', $at[0] > -0.05 && $at[0] < 0.2, sprintf('%.3f s', $at[0]));
check('the second one after the first released', $at[1] - $at[0] > 0.19 && $at[1] - $at[0] < 0.45, sprintf('%.3f s', $at[1] - $at[0]));
var_dump((redis_cmd($url, 'EXISTS', $key, $key . '~~q') + count(redis_cmd($url, 'KEYS', $key . '~~a~*'))));
redis_cmd($url, 'DEL', $order);
?>
--EXPECT--
waiter 0 queued: ok
waiter 1 queued: ok
waiter 0 done: ok
waiter 1 done: ok
0,1
the first waiter soon after the expiry: ok
the second one after the first released: ok
int(0)

--TEST--
signals: SIGALRM during a blocked acquire runs its handler within 100 ms and the wait goes on until the lock is ours
--EXTENSIONS--
redislock
pcntl
--SKIPIF--
<?php require __DIR__ . '/../skipif.inc'; ?>
--FILE--
<?php
require __DIR__ . '/../config.inc';
require __DIR__ . '/../children.inc';
$url = redislock_test_url();
$key = redislock_test_key('alarm-wait');

// Another process holds the lock (ttl 60) and releases it after 2 s.
$holder = spawn_php(sprintf('
    $l = new RedisLock(%s, 60, %s);
    echo $l->acquire() ? "held\n" : "not held\n";
    usleep(2000000);
    echo $l->release() ? "released\n" : "not released\n";',
    var_export($key, true), var_export($url, true)));
check('holder has the lock', read_line($holder) === 'held');

// What queue workers do: an async handler for the job timeout alarm.
pcntl_async_signals(true);
$t0 = hrtime(true);
$ran = [];
pcntl_signal(SIGALRM, function () use (&$ran, $t0) { $ran[] = since($t0); });
pcntl_alarm(1);
$lock = new RedisLock($key, 60, $url);
$got = $lock->acquire(15.0);
$elapsed = since($t0);
check('acquired once the holder released', $got === true && $elapsed > 1.8 && $elapsed < 3.5, sprintf('%s after %.3f s', var_export($got, true), $elapsed));
check('the handler ran once, within 100 ms of the alarm', count($ran) === 1 && $ran[0] >= 0.9 && $ran[0] < 1.12, json_encode($ran));
check('the lock holds our token', redis_cmd($url, 'GET', $key) === $lock->token());
[$code, $out] = finish_php($holder);
check('holder released it', $code === 0 && trim($out) === 'released', "$code: $out");
var_dump($lock->release());
var_dump(redis_cmd($url, 'EXISTS', $key, $key . '~~q') + count(redis_keys_left($url, $key . '~~*')));
?>
--EXPECT--
holder has the lock: ok
acquired once the holder released: ok
the handler ran once, within 100 ms of the alarm: ok
the lock holds our token: ok
holder released it: ok
bool(true)
int(0)

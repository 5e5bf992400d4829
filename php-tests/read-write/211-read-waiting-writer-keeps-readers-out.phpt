--TEST--
Read holds: a writer waiting in another process keeps new readers out, and the last reader's release wakes it
--EXTENSIONS--
redislock
--SKIPIF--
<?php require __DIR__ . '/../skipif.inc'; ?>
--FILE--
<?php
require __DIR__ . '/../config.inc';
require __DIR__ . '/../children.inc';
$url = redislock_test_url();
$key = redislock_test_key('read-writer-waits');
$queue = "$key~~q";

$first = new RedisLock($key, 10, $url);
check('a reader holds the lock', $first->acquireRead());

// The writer waits up to 8 s; retry_delay 5 s: one that looked for itself
// instead of being woken would come about 5 s late.
$writer = spawn_php(sprintf('
    $w = new RedisLock(%s, 10, %s, ["retry_delay" => 5.0]);
    echo "waiting\n";
    $got = $w->acquire(8.0);
    echo $got ? "writing\n" : "gave up\n";
    usleep(300000);
    echo $w->release() ? "released\n" : "release failed\n";',
    var_export($key, true), var_export($url, true)));
check('the writer starts', read_line($writer) === 'waiting');
check('the writer queues', wait_until(fn () => redis_cmd($url, 'ZCARD', $queue) === 1));

$late = new RedisLock($key, 10, $url);
check('a new reader is kept out', $late->acquireRead() === false);
check('also when it waits a little', $late->acquireRead(0.3) === false);
check('the first reader still reads', $first->isAcquired());
check('the writer still waits', redis_cmd($url, 'ZCARD', $queue) === 1);

$t0 = hrtime(true);
check('the last reader leaves', $first->release());
check('the writer gets the lock', read_line($writer) === 'writing');
$late_by = since($t0);
check('woken by that release', $late_by < 3.0, sprintf('%.3f s', $late_by));
check('no reader beside the writer', $late->acquireRead() === false);
check('the new reader gets in after the writer', $late->acquireRead(5.0));
check('after the writer released', read_line($writer) === 'released');
[$code, $rest] = finish_php($writer);
check('the writer ended', $code === 0, "$code $rest");
check('released', $late->release());
check('nothing left', redis_keys_left($url, "$key*") === [], implode(' ', redis_keys_left($url, "$key*")));
?>
--EXPECT--
a reader holds the lock: ok
the writer starts: ok
the writer queues: ok
a new reader is kept out: ok
also when it waits a little: ok
the first reader still reads: ok
the writer still waits: ok
the last reader leaves: ok
the writer gets the lock: ok
woken by that release: ok
no reader beside the writer: ok
the new reader gets in after the writer: ok
after the writer released: ok
the writer ended: ok
released: ok
nothing left: ok

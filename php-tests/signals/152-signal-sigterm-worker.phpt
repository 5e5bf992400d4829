--TEST--
signals: a queue worker's SIGTERM handler runs during a blocked acquire; a "stop after this job" flag lets the wait go on, a handler that calls exit() ends it and leaves nothing queued
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
$key = redislock_test_key('sigterm');

$lock = new RedisLock($key, 60, $url);
var_dump($lock->acquire());

// A worker loop that stops after the current job on SIGTERM.
$flag = spawn_php(sprintf('
    pcntl_async_signals(true);
    $stop = false;
    pcntl_signal(SIGTERM, function () use (&$stop) { $stop = true; echo "stop requested\n"; });
    $l = new RedisLock(%s, 60, %s);
    echo "waiting\n";
    while (!$stop || $l->isAcquired()) {
        if ($l->acquire(15.0)) { echo "job runs\n"; $l->release(); break; }
    }
    echo $stop ? "stopping\n" : "not told\n";',
    var_export($key, true), var_export($url, true)));
check('worker waiting', read_line($flag) === 'waiting' && wait_until(fn () => redis_cmd($url, 'ZCARD', $key . '~~q') === 1));
proc_terminate($flag[0], SIGTERM);
check('its handler ran at once', read_line($flag) === 'stop requested');
check('and it is still queued', redis_cmd($url, 'ZCARD', $key . '~~q') === 1);
var_dump($lock->release());
[$code, $out] = finish_php($flag);
check('it got the lock, then stopped', $code === 0 && $out === "job runs\nstopping\n", "$code: $out");

// A worker whose handler exits at once.
var_dump($lock->acquire());
$exiting = spawn_php(sprintf('
    pcntl_async_signals(true);
    pcntl_signal(SIGTERM, function () { echo "bye\n"; exit(3); });
    $l = new RedisLock(%s, 60, %s);
    echo "waiting\n";
    $l->acquire(15.0);
    echo "acquire returned\n";',
    var_export($key, true), var_export($url, true)));
check('second worker waiting', read_line($exiting) === 'waiting' && wait_until(fn () => redis_cmd($url, 'ZCARD', $key . '~~q') === 1));
proc_terminate($exiting[0], SIGTERM);
[$code, $out] = finish_php($exiting);
check('it exited from its handler', $code === 3 && $out === "bye\n", "$code: $out");
check('and left the queue', redis_cmd($url, 'EXISTS', $key . '~~q') + count(redis_cmd($url, 'KEYS', $key . '~~a~*')) === 0);
var_dump($lock->release());
var_dump(redis_cmd($url, 'EXISTS', $key));
?>
--EXPECT--
bool(true)
worker waiting: ok
its handler ran at once: ok
and it is still queued: ok
bool(true)
it got the lock, then stopped: ok
bool(true)
second worker waiting: ok
it exited from its handler: ok
and left the queue: ok
bool(true)
int(0)

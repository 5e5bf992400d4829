--TEST--
Read holds: a SIGKILLed reader's hold ends with its lease (a waiting writer then gets the lock), also when a longer reader left before
--EXTENSIONS--
redislock
--SKIPIF--
<?php require __DIR__ . '/../skipif.inc'; ?>
--FILE--
<?php
require __DIR__ . '/../config.inc';
require __DIR__ . '/../children.inc';
$url = redislock_test_url();

/** A child process that takes a 1 s read hold of $key and sleeps. */
function reader(string $key, string $url): array
{
    $child = spawn_php(sprintf('
        $r = new RedisLock(%s, 1.0, %s);
        if (!$r->acquireRead()) { echo "refused\n"; exit(1); }
        echo "reading\n";
        sleep(30);', var_export($key, true), var_export($url, true)));
    check('the child reads', read_line($child) === 'reading');
    return $child;
}

function kill_reader(array $child): int
{
    proc_terminate($child[0], 9);
    $t = hrtime(true);
    [$code] = finish_php($child);
    check('the child is killed', $code === 'signal 9', (string) $code);
    return $t;
}

echo "-- a killed reader\n";
$key = redislock_test_key('read-killed');
$writer = new RedisLock($key, 10, $url);
$child = reader($key, $url);
$t_kill = kill_reader($child);
check('its lease still keeps the writer out', $writer->acquire() === false);
check('the writer waits and gets the lock', $writer->acquire(5.0));
$after = since($t_kill);
check('when the 1 s lease ends', $after < 3.0, sprintf('%.3f s', $after));
check('released', $writer->release());

echo "-- a 30 s reader leaves, then a 1 s reader is killed\n";
$key = redislock_test_key('read-killed-short');
$long = new RedisLock($key, 30, $url);
$writer = new RedisLock($key, 10, $url);
check('the 30 s reader reads', $long->acquireRead());
$child = reader($key, $url);
check('the 30 s reader leaves', $long->release());
$t_kill = kill_reader($child);
check('the writer waits and gets the lock', $writer->acquire(5.0));
$after = since($t_kill);
check('when the 1 s lease ends, not the 30 s one', $after < 3.0, sprintf('%.3f s', $after));
check('released', $writer->release());
// The dead reader's entry goes with K~~r's expiry or the next reader's
// release; the lock itself is free.
check('the lock is free', redis_cmd($url, 'EXISTS', $key) === 0);
?>
--EXPECT--
-- a killed reader
the child reads: ok
the child is killed: ok
its lease still keeps the writer out: ok
the writer waits and gets the lock: ok
when the 1 s lease ends: ok
released: ok
-- a 30 s reader leaves, then a 1 s reader is killed
the 30 s reader reads: ok
the child reads: ok
the 30 s reader leaves: ok
the child is killed: ok
the writer waits and gets the lock: ok
when the 1 s lease ends, not the 30 s one: ok
released: ok
the lock is free: ok

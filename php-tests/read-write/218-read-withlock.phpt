--TEST--
Read holds: withLock() on an object holding a read hold promotes it (waiting for the other readers up to $wait), runs the callback as the writer and releases: the object then holds nothing
--EXTENSIONS--
redislock
--SKIPIF--
<?php require __DIR__ . '/../skipif.inc'; ?>
--FILE--
<?php
require __DIR__ . '/../config.inc';
require __DIR__ . '/../children.inc';
$url = redislock_test_url();
$key = redislock_test_key('read-withlock');

echo "-- the only reader\n";
$a = new RedisLock($key, 10, $url);
check('reads', $a->acquireRead());
$seen = $a->withLock(fn (RedisLock $l) => [
    'token' => is_string($l->token()),
    'the lock holds its token' => redis_cmd($url, 'GET', $key) === $l->token(),
    'no reader left' => redis_cmd($url, 'ZCARD', "$key~~r") === 0,
]);
check('the callback ran as the writer', $seen === array_fill_keys(array_keys($seen), true), json_encode($seen));
check('the object holds nothing after', !$a->isAcquired() && $a->token() === null && $a->release() === false);
check('nothing left', redis_keys_left($url, "$key*") === []);

echo "-- beside another reader\n";
$b = new RedisLock($key, 10, $url);
check('a reads', $a->acquireRead());
check('b reads', $b->acquireRead());
$called = 0;
show_outcome(fn () => $a->withLock(function () use (&$called) { $called++; }));
show_outcome(fn () => $a->withLock(function () use (&$called) { $called++; }, 0.2));
check('the callback did not run', $called === 0);
check('a still reads', $a->isAcquired() && $a->token() === null);

// Another reader, in another process, leaves 0.3 s into a's wait.
$child = spawn_php(sprintf('
    $c = new RedisLock(%s, 10, %s);
    if (!$c->acquireRead()) { echo "refused\n"; exit(1); }
    echo "reading\n";
    usleep(300000);
    echo $c->release() ? "left\n" : "release failed\n";',
    var_export($key, true), var_export($url, true)));
check('a third reader in another process', read_line($child) === 'reading');
check('b leaves', $b->release());
$value = $a->withLock(fn (RedisLock $l) => redis_cmd($url, 'GET', $key) === $l->token() ? 'written' : 'not ours', 5.0);
check('promoted once the other reader left', $value === 'written', $value);
check('it had left', read_line($child) === 'left');
[$code, $rest] = finish_php($child);
check('the child ended', $code === 0, "$code $rest");
check('the object holds nothing after', !$a->isAcquired());
check('nothing left', redis_keys_left($url, "$key*") === []);
?>
--EXPECTF--
-- the only reader
reads: ok
the callback ran as the writer: ok
the object holds nothing after: ok
nothing left: ok
-- beside another reader
a reads: ok
b reads: ok
RedisLock\TimeoutException: %s
RedisLock\TimeoutException: %s
the callback did not run: ok
a still reads: ok
a third reader in another process: ok
b leaves: ok
promoted once the other reader left: ok
it had left: ok
the child ended: ok
the object holds nothing after: ok
nothing left: ok

--TEST--
Read holds meet the other primitives' rules: withLock() ends and checks whatever hold its callback left (a read hold too), a hold belongs to its Fiber for every method (another Fiber's acquireRead() competes, it does not demote), and restore() adopts write holds only
--EXTENSIONS--
redislock
--SKIPIF--
<?php require __DIR__ . '/../skipif.inc'; ?>
--FILE--
<?php
require __DIR__ . '/../config.inc';
require __DIR__ . '/../children.inc';
$url = redislock_test_url();
$key = redislock_test_key('seams');

echo "-- withLock() ends a read hold its callback left\n";
$a = new RedisLock($key, 10, $url);
$value = $a->withLock(fn (RedisLock $l) => $l->acquireRead() ? 'read' : 'not read');
check('the callback demoted the hold', $value === 'read');
check('the object holds nothing after', !$a->isAcquired() && $a->release() === false);
check('nothing left in Redis', redis_keys_left($url, "$key*") === []);

echo "-- and checks it: a read hold lost while the callback ran\n";
show_outcome(fn () => $a->withLock(function (RedisLock $l) use ($url, $key) {
    $l->acquireRead();
    // Lost to a writer: the read hold is gone, the lock is someone else's.
    redis_cmd($url, 'DEL', $key, "$key~~r");
    redis_cmd($url, 'SET', $key, 'someone-else', 'PX', '10000');
    return 'done';
}));
redis_cmd($url, 'DEL', $key);

echo "-- a hold belongs to its Fiber, for every method\n";
$shared = new RedisLock($key, 10, $url);
$c = new Fiber(function () use ($shared) {
    check('fiber C takes the write hold', $shared->acquire());
    Fiber::suspend();
    check('fiber C still holds it', $shared->isAcquired());
    check('fiber C releases it', $shared->release());
});
$c->start();
$token = redis_cmd($url, 'GET', $key);
$d = new Fiber(function () use ($shared, $url, $key, $token) {
    check('fiber D does not see it', !$shared->isAcquired() && $shared->token() === null);
    check('fiber D\'s acquireRead() competes: the writer keeps it out', $shared->acquireRead() === false);
    check('fiber D\'s release() frees nothing', $shared->release() === false);
    check('the lock is still C\'s write hold', redis_cmd($url, 'GET', $key) === $token && redis_cmd($url, 'EXISTS', "$key~~r") === 0);
});
$d->start();
$other = new RedisLock($key, 10, $url, ['reentrant' => false]);
check('a writer elsewhere waits', $other->acquire() === false);
$c->resume();
check('nothing left', redis_keys_left($url, "$key*") === []);

echo "-- restore() adopts write holds only\n";
$r = new RedisLock($key, 10, $url);
check('a reader', $r->acquireRead());
$reader = redis_reader_tokens($url, $key)[0];
foreach (['a made-up token' => str_repeat('f00d', 8), "another reader's token" => $reader] as $what => $t) {
    $x = RedisLock::restore($key, $t, 10, $url);
    show_outcome(fn () => $x->acquireRead());
    check("no read hold under $what", $what !== 'a made-up token' || !in_array($t, redis_reader_tokens($url, $key), true));
    unset($x);
}
check('the reader still reads', $r->isAcquired() && in_array($reader, redis_reader_tokens($url, $key), true));
check('and releases', $r->release());
check('nothing left at the end', redis_keys_left($url, "$key*") === []);
?>
--EXPECTF--
-- withLock() ends a read hold its callback left
the callback demoted the hold: ok
the object holds nothing after: ok
nothing left in Redis: ok
-- and checks it: a read hold lost while the callback ran
RedisLock\LockLostException: lock "%s" was lost while held: the lease expired or was taken before withLock() released it
-- a hold belongs to its Fiber, for every method
fiber C takes the write hold: ok
fiber D does not see it: ok
fiber D's acquireRead() competes: the writer keeps it out: ok
fiber D's release() frees nothing: ok
the lock is still C's write hold: ok
a writer elsewhere waits: ok
fiber C still holds it: ok
fiber C releases it: ok
nothing left: ok
-- restore() adopts write holds only
a reader: ok
RedisLock\LockException: acquireRead() on lock "%s": this object's hold was taken over with restore(), which adopts write holds only; release it, or read with another object; no read hold was taken
no read hold under a made-up token: ok
RedisLock\LockException: acquireRead() on lock "%s": this object's hold was taken over with restore(), which adopts write holds only; release it, or read with another object; no read hold was taken
no read hold under another reader's token: ok
the reader still reads: ok
and releases: ok
nothing left at the end: ok

--TEST--
acquireRead(): readers share, a writer excludes them and is excluded; release(), isAcquired(), remainingTtl(), refresh() on a read hold; promotion and demotion; no token; nothing left in Redis; refused over Redlock
--EXTENSIONS--
redislock
--SKIPIF--
<?php require __DIR__ . '/../skipif.inc'; ?>
--FILE--
<?php
require __DIR__ . '/../config.inc';
require __DIR__ . '/../children.inc';
$url = redislock_test_url();
$redlock = redislock_test_topology() === 'redlock';

/*
 * Runs one part of the test and prints one line. $part returns its
 * conditions by name; the line says which of them failed. Over Redlock
 * every read hold is refused: there the part passes only when its first
 * acquireRead() threw that LockException and nothing of the key was left
 * in Redis (a write hold taken before is then released by $part's caller).
 */
function part(string $label, string $key, callable $part): void
{
    global $url, $redlock;
    $stored = redislock_test_stored_key($key);
    try {
        $failed = array_keys(array_filter($part(), fn ($ok) => $ok !== true));
        if ($redlock) {
            $failed[] = 'not refused over Redlock';
        }
    } catch (RedisLock\LockException $e) {
        if (!$redlock || get_class($e) !== 'RedisLock\LockException'
            || !str_contains($e->getMessage(), 'several independent servers (Redlock)')
            || !str_contains($e->getMessage(), 'no read hold was taken')) {
            throw $e;
        }
        $failed = [];
    }
    RedisLock::releaseAll();
    $left = redis_keys_left($url, "$stored*");
    if ($left !== []) {
        $failed[] = 'left in Redis: ' . implode(' ', $left);
    }
    check($label, $failed === [], implode('; ', $failed));
}

$lock = fn (string $key, float $ttl = 10) => redislock_test_lock($key, $ttl);
$get = fn (string $key) => redis_cmd($url, 'GET', redislock_test_stored_key($key));
$readers = fn (string $key) => redis_readers($url, redislock_test_stored_key($key));

$key = redislock_test_key('read-share');
part('readers share; a writer is excluded until the last one leaves', $key, function () use ($key, $lock, $get, $readers) {
    [$a, $b, $w] = [$lock($key), $lock($key), $lock($key)];
    $r = ['a reads' => $a->acquireRead(), 'b reads' => $b->acquireRead()];
    $r += [
        'both hold' => $a->isAcquired() && $b->isAcquired(),
        'the lock holds the read mark' => $get($key) === '~~read',
        'two readers in K~~r' => $readers($key) === 2,
        'isLocked()' => $w->isLocked(),
        'a writer is refused' => $w->acquire() === false,
        'a writer waits in vain' => $w->acquire(0.2) === false,
        'a releases' => $a->release(),
        'still no writer beside b' => $w->acquire() === false,
        'b releases' => $b->release(),
        'the writer gets it' => $w->acquire(),
        'and holds it alone' => $get($key) === $w->token(),
        'released' => $w->release(),
    ];
    return $r;
});

$key = redislock_test_key('read-excluded');
part('a writer excludes readers', $key, function () use ($key, $lock) {
    [$w, $r] = [$lock($key), $lock($key)];
    return [
        'the writer holds' => $w->acquire(),
        'a reader is refused' => $r->acquireRead() === false,
        'a reader waits in vain' => $r->acquireRead(0.2) === false,
        'and holds nothing' => !$r->isAcquired() && $r->remainingTtl() === null,
        'the writer releases' => $w->release(),
        'the reader gets in' => $r->acquireRead(),
        'released' => $r->release(),
    ];
});

$key = redislock_test_key('read-methods');
part('release(), isAcquired(), remainingTtl(), refresh() act on the read hold', $key, function () use ($key, $lock, $url, $readers) {
    $a = $lock($key);
    $r = ['nothing held yet' => !$a->isAcquired() && $a->remainingTtl() === null && !$a->refresh() && !$a->release()];
    $r['reads'] = $a->acquireRead();
    $r['isAcquired()'] = $a->isAcquired();
    $left = $a->remainingTtl();
    $r['remainingTtl() within the 10 s lease'] = is_float($left) && $left > 9.0 && $left <= 10.0;
    $r['refresh(20)'] = $a->refresh(20);
    $left = $a->remainingTtl();
    $r['remainingTtl() within the 20 s lease'] = is_float($left) && $left > 19.0 && $left <= 20.0;
    $r['the lock lives as long'] = redis_cmd($url, 'PTTL', redislock_test_stored_key($key)) > 19000;
    $r['refresh() without a ttl: the lock\'s 10 s'] = $a->refresh() && $a->remainingTtl() <= 10.0;
    $r['and the lock with it (+ 0.5 s clock grace)'] = redis_cmd($url, 'PTTL', redislock_test_stored_key($key)) <= 10500;
    $r['acquireRead() again: still one reader'] = $a->acquireRead() && $readers($key) === 1;
    $r['release()'] = $a->release();
    $r['released once'] = $a->release() === false;
    $r['holds nothing after'] = !$a->isAcquired() && $a->remainingTtl() === null && $a->refresh() === false;
    return $r;
});

$key = redislock_test_key('read-token');
part('token() and fencingToken() are null on a read hold', $key, function () use ($key, $lock) {
    $a = $lock($key);
    return [
        'reads' => $a->acquireRead(),
        'token() null' => $a->token() === null,
        'fencingToken() null' => $a->fencingToken() === null,
        'released' => $a->release(),
    ];
});

$key = redislock_test_key('read-promote');
part('acquire() promotes the only reader', $key, function () use ($key, $lock, $get, $readers) {
    [$a, $b] = [$lock($key), $lock($key)];
    $r = ['a reads' => $a->acquireRead(), 'b reads' => $b->acquireRead()];
    $r['no promotion beside b'] = $a->acquire() === false;
    $r['nor after a wait'] = $a->acquire(0.2) === false;
    $r['a still reads'] = $a->isAcquired() && $a->token() === null && $readers($key) === 2;
    $r['b leaves'] = $b->release();
    $r['a is promoted'] = $a->acquire();
    $r['a writes'] = is_string($a->token()) && $get($key) === $a->token() && $readers($key) === 0;
    $r['b cannot read beside it'] = $b->acquireRead() === false;
    $r['released'] = $a->release();
    return $r;
});

$key = redislock_test_key('read-demote');
part('acquireRead() demotes the write hold', $key, function () use ($key, $lock, $get, $readers) {
    [$a, $b, $w] = [$lock($key), $lock($key), $lock($key)];
    $r = ['a writes' => $a->acquire()];
    $r['a demotes'] = $a->acquireRead();
    $r['a reads'] = $a->isAcquired() && $a->token() === null && $get($key) === '~~read' && $readers($key) === 1;
    $r['b reads beside it'] = $b->acquireRead();
    $r['no writer'] = $w->acquire() === false;
    $r['a releases'] = $a->release();
    $r['b releases'] = $b->release();
    return $r;
});

$key = redislock_test_key('read-demote-twice');
part('a write hold taken twice is not demoted', $key, function () use ($key, $lock, $get) {
    [$a, $again] = [$lock($key), $lock($key)];
    $r = ['a writes' => $a->acquire(), 'reentrant' => $again->acquire()];
    try {
        $a->acquireRead();
        $r['refused'] = false;
    } catch (RedisLock\LockException $e) {
        if (str_contains($e->getMessage(), 'Redlock')) {
            throw $e;
        }
        $r['refused'] = str_contains($e->getMessage(), 'is held more than once in this process');
    }
    $r['still written'] = $a->isAcquired() && $get($key) === $a->token();
    $r['released twice'] = $again->release() && $a->release();
    return $r;
});

echo "-- over Redlock a write hold stays one\n";
$key = redislock_test_key('read-redlock');
$a = $lock($key);
$a->acquire();
try {
    $a->acquireRead();
    $refused = !$redlock;
} catch (RedisLock\LockException $e) {
    $refused = $redlock;
}
check('demotion refused over Redlock only', $refused);
check('the write hold is kept', $redlock ? $a->isAcquired() && $a->token() !== null : $a->isAcquired());
check('and released', $a->release() && redis_keys_left($url, redislock_test_stored_key($key) . '*') === []);
?>
--EXPECT--
readers share; a writer is excluded until the last one leaves: ok
a writer excludes readers: ok
release(), isAcquired(), remainingTtl(), refresh() act on the read hold: ok
token() and fencingToken() are null on a read hold: ok
acquire() promotes the only reader: ok
acquireRead() demotes the write hold: ok
a write hold taken twice is not demoted: ok
-- over Redlock a write hold stays one
demotion refused over Redlock only: ok
the write hold is kept: ok
and released: ok

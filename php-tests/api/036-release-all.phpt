--TEST--
RedisLock::releaseAll(): ends the request scope by hand; counts what it released; objects hold nothing after it; auto_release false holds stay
--EXTENSIONS--
redislock
--SKIPIF--
<?php require __DIR__ . '/../skipif.inc'; ?>
--FILE--
<?php
require __DIR__ . '/../config.inc';
require __DIR__ . '/../children.inc';
$url = redislock_test_url();
$exists = fn (string $key) => redis_cmd($url, 'EXISTS', redislock_test_stored_key($key));

echo "-- several locks held\n";
$keys = [redislock_test_key('all-a'), redislock_test_key('all-b'), redislock_test_key('all-c')];
$locks = array_map(fn ($k) => redislock_test_lock($k, 10), $keys);
foreach ($locks as $l) {
    $l->acquire();
}
// A reentrant acquire of the first key, through another object: one lock in Redis.
$again = redislock_test_lock($keys[0], 10);
check('reentrant acquire', $again->acquire() && $again->token() === $locks[0]->token());
check('all held in Redis', array_sum(array_map($exists, $keys)) === 3);
var_dump(RedisLock::releaseAll());
check('keys gone in Redis', array_sum(array_map($exists, $keys)) === 0);
check('isAcquired() false', !$locks[0]->isAcquired() && !$again->isAcquired());
check('release() false, no error', $locks[1]->release() === false && $again->release() === false);
check('token() null', $locks[2]->token() === null);
var_dump(RedisLock::releaseAll());

echo "-- reentrancy does not cross it\n";
$key = redislock_test_key('all-reenter');
$a = redislock_test_lock($key, 10);
check('a acquires', $a->acquire());
RedisLock::releaseAll();
redis_cmd($url, 'SET', redislock_test_stored_key($key), 'someone-else', 'PX', '10000');
$b = redislock_test_lock($key, 10);
check('a new object competes anew', $b->acquire() === false);
check('the old object too', $a->acquire() === false);
redis_cmd($url, 'DEL', redislock_test_stored_key($key));
check('and wins once it is free', $b->acquire() && $b->release() && $exists($key) === 0);

echo "-- auto_release false survives it\n";
$kept = redislock_test_key('all-kept');
$gone = redislock_test_key('all-gone');
$k = redislock_test_lock($kept, 10, ['auto_release' => false]);
$g = redislock_test_lock($gone, 10);
$k->acquire();
$g->acquire();
$token = $k->token();
var_dump(RedisLock::releaseAll());
check('kept in Redis', redis_cmd($url, 'GET', redislock_test_stored_key($kept)) === $token);
check('still held by its object', $k->isAcquired() && $k->token() === $token);
check('another object does not join it', redislock_test_lock($kept, 10)->acquire() === false);
check('its object releases it', $k->release() && $exists($kept) === 0);

echo "-- withLock\n";
$key = redislock_test_key('all-withlock');
$l = redislock_test_lock($key, 10);
show_outcome(fn () => $l->withLock(function () use ($exists, $key) {
    $n = RedisLock::releaseAll();
    return "released $n inside, EXISTS " . $exists($key);
}), fn ($r) => $r);
$fiber = new Fiber(fn () => $l->withLock(function () {
    Fiber::suspend();
    return 'fiber callback done';
}));
$fiber->start();
echo 'held while the fiber waits: ', $exists($key), "\n";
echo 'releaseAll() from the main flow: ', RedisLock::releaseAll(), "\n";
show_outcome(function () use ($fiber) {
    $fiber->resume();
    return $fiber->getReturn();
}, fn ($r) => $r);
check('nothing left', $exists($key) === 0);

echo "-- a worker loop: each request forgets its lock\n";
$key = redislock_test_key('all-worker');
$tokens = [];
for ($request = 1; $request <= 5; $request++) {
    // The "request": takes the lock and forgets to release it (the object
    // lives on in a global, as in a worker's container).
    $GLOBALS['forgotten'][] = $lock = redislock_test_lock($key, 10);
    $won = $lock->acquire();
    $tokens[] = $lock->token();
    printf("request %d: acquired %s, released %d\n", $request, var_export($won, true), RedisLock::releaseAll());
}
check('a fresh token per request', count(array_unique($tokens)) === 5);
check('nothing left', $exists($key) === 0);
?>
--EXPECT--
-- several locks held
reentrant acquire: ok
all held in Redis: ok
int(3)
keys gone in Redis: ok
isAcquired() false: ok
release() false, no error: ok
token() null: ok
int(0)
-- reentrancy does not cross it
a acquires: ok
a new object competes anew: ok
the old object too: ok
and wins once it is free: ok
-- auto_release false survives it
int(1)
kept in Redis: ok
still held by its object: ok
another object does not join it: ok
its object releases it: ok
-- withLock
released 1 inside, EXISTS 0
held while the fiber waits: 1
releaseAll() from the main flow: 1
fiber callback done
nothing left: ok
-- a worker loop: each request forgets its lock
request 1: acquired true, released 1
request 2: acquired true, released 1
request 3: acquired true, released 1
request 4: acquired true, released 1
request 5: acquired true, released 1
a fresh token per request: ok
nothing left: ok

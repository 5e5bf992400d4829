--TEST--
fibers: a hold belongs to the Fiber that took it; another Fiber (or the main flow) competes for it, the same Fiber re-enters it
--EXTENSIONS--
redislock
--SKIPIF--
<?php require __DIR__ . '/../skipif.inc'; ?>
--FILE--
<?php
require __DIR__ . '/../config.inc';
require __DIR__ . '/../children.inc';
$url = redislock_test_url();
$key = redislock_test_key('fiber');

$a = new Fiber(function () use ($url, $key) {
    $l = redislock_test_lock($key, 10);
    check('fiber A acquires', $l->acquire());
    $again = redislock_test_lock($key, 10);
    check('fiber A re-enters through another object', $again->acquire() && $again->token() === $l->token());
    check('one release keeps it', $again->release() && $l->isAcquired());
    Fiber::suspend();
    check('fiber A releases', $l->release());
});
$a->start();

$b = new Fiber(function () use ($url, $key) {
    $l = redislock_test_lock($key, 10);
    check('fiber B does not re-enter A\'s hold', !$l->acquire());
    Fiber::suspend();
    check('fiber B acquires after A released', $l->acquire());
    check('fiber B releases', $l->release());
});
$b->start();

$main = redislock_test_lock($key, 10);
check('the main flow does not re-enter A\'s hold', !$main->acquire());
$a->resume();
$b->resume();
check('the main flow acquires at the end', $main->acquire() && $main->release());
check('nothing left', redis_cmd($url, 'EXISTS', redislock_test_stored_key($key)) === 0);

// One object shared by two Fibers: only the Fiber that took the hold
// releases it.
$shared = redislock_test_lock($key, 10);
$c = new Fiber(function () use ($shared) {
    check('fiber C acquires through the shared object', $shared->acquire());
    Fiber::suspend();
    check('fiber C releases it', $shared->release());
});
$c->start();
$token = redis_cmd($url, 'GET', redislock_test_stored_key($key));
$d = new Fiber(function () use ($shared, $url, $key, $token) {
    check('fiber D cannot release C\'s hold', !$shared->release() && redis_cmd($url, 'GET', redislock_test_stored_key($key)) === $token);
});
$d->start();
check('nor can the main flow', !$shared->release() && redis_cmd($url, 'EXISTS', redislock_test_stored_key($key)) === 1);
$c->resume();
check('released by C', redis_cmd($url, 'EXISTS', redislock_test_stored_key($key)) === 0);
?>
--EXPECT--
fiber A acquires: ok
fiber A re-enters through another object: ok
one release keeps it: ok
fiber B does not re-enter A's hold: ok
the main flow does not re-enter A's hold: ok
fiber A releases: ok
fiber B acquires after A released: ok
fiber B releases: ok
the main flow acquires at the end: ok
nothing left: ok
fiber C acquires through the shared object: ok
fiber D cannot release C's hold: ok
nor can the main flow: ok
fiber C releases it: ok
released by C: ok

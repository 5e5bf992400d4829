--TEST--
owner option: the hold's token is the owner given; a non-reentrant restore() with it releases in Redis; an empty or oversized owner is a ValueError
--EXTENSIONS--
redislock
--SKIPIF--
<?php require __DIR__ . '/../skipif.inc'; ?>
--FILE--
<?php
require __DIR__ . '/../config.inc';
require __DIR__ . '/../children.inc';
$url = redislock_test_url();
$key = redislock_test_key('owner');
$l = redislock_test_lock($key, 10, ['owner' => 'job-42-owner', 'reentrant' => false]);
check('acquired', $l->acquire());
check('the token is the owner', $l->token() === 'job-42-owner');
check('Redis holds the owner as the value', redis_cmd($url, 'GET', redislock_test_stored_key($key)) === 'job-42-owner');
check('the owner is not shown by var_dump', !str_contains(print_r(redislock_test_lock($key, 10, ['owner' => 'hidden-owner']), true), 'hidden-owner'));
$same = redislock_test_lock($key, 10, ['owner' => 'job-42-owner', 'reentrant' => false]);
check('another object with the same owner competes', !$same->acquire());
// A blocking acquire agrees (it once claimed the lock at once: the value
// was its own token), in another process too.
check('and waiting does not make it ours', !$same->acquire(0.3) && $l->isAcquired());
[$code, $out] = redislock_run_child(sprintf('
    $l = new RedisLock(%s, 10, %s, %s);
    var_dump($l->acquire(), $l->acquire(0.3));', var_export($key, true), var_export(redislock_test_servers(), true),
    var_export(redislock_test_options(['owner' => 'job-42-owner']), true)));
check('nor in another process', $code === 0 && $out === "bool(false)\nbool(false)\n", "$code: $out");
// Laravel's restoreLock(): release a lock knowing only its owner.
$restored = redislock_test_restore($key, 'job-42-owner', 10, ['reentrant' => false]);
check('restored and released by owner', $restored->release());
check('nothing left', redis_cmd($url, 'EXISTS', redislock_test_stored_key($key)) === 0);
check('the first object no longer holds it', !$l->isAcquired());
foreach (['', str_repeat('x', 1025)] as $bad) {
    try {
        redislock_test_lock($key, 10, ['owner' => $bad]);
        echo "accepted\n";
    } catch (ValueError $e) {
        echo $e->getMessage(), "\n";
    }
}
?>
--EXPECT--
acquired: ok
the token is the owner: ok
Redis holds the owner as the value: ok
the owner is not shown by var_dump: ok
another object with the same owner competes: ok
and waiting does not make it ours: ok
nor in another process: ok
restored and released by owner: ok
nothing left: ok
the first object no longer holds it: ok
RedisLock::__construct(): Argument #4 ($options) option "owner" must not be empty
RedisLock::__construct(): Argument #4 ($options) option "owner" must be at most 1024 bytes long

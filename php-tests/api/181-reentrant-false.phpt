--TEST--
reentrant => false: a second object on a held key competes like another process (fails at once, times out when waiting), and takes it once released; a reentrant object never joins such a hold
--EXTENSIONS--
redislock
--SKIPIF--
<?php require __DIR__ . '/../skipif.inc'; ?>
--FILE--
<?php
require __DIR__ . '/../config.inc';
require __DIR__ . '/../children.inc';
$url = redislock_test_url();
$key = redislock_test_key('not-reentrant');
$a = redislock_test_lock($key, 10, ['reentrant' => false]);
$b = redislock_test_lock($key, 10, ['reentrant' => false]);
check('a acquires', $a->acquire());
check('b fails at once', !$b->acquire());
$t = hrtime(true);
check('b waits and times out', !$b->acquire(0.2) && since($t) >= 0.19);
check('a again through the same object fails too', !$a->acquire());
check('a still holds with one hold', $a->isAcquired() && $a->__debugInfo()['holdCount'] === 1);
check('a releases', $a->release());
check('b acquires now', $b->acquire());
check('the key holds b\'s token', redis_cmd($url, 'GET', redislock_test_stored_key($key)) === $b->token());
// A hold taken with reentrant => false is re-entered by nobody: a default
// (reentrant) object on the key competes for it like another process.
$c = redislock_test_lock($key, 10);
check('a reentrant object does not join it', !$c->acquire() && $c->token() === null);
check('nor by waiting', !$c->acquire(0.2) && $b->isAcquired());
check('c cannot release it', !$c->release() && redis_cmd($url, 'GET', redislock_test_stored_key($key)) === $b->token());
check('b releases', $b->release());
check('c acquires now, its own hold', $c->acquire() && $c->token() !== $b->token());
check('c releases', $c->release());
check('nothing left', redis_cmd($url, 'EXISTS', redislock_test_stored_key($key)) === 0);
?>
--EXPECT--
a acquires: ok
b fails at once: ok
b waits and times out: ok
a again through the same object fails too: ok
a still holds with one hold: ok
a releases: ok
b acquires now: ok
the key holds b's token: ok
a reentrant object does not join it: ok
nor by waiting: ok
c cannot release it: ok
b releases: ok
c acquires now, its own hold: ok
c releases: ok
nothing left: ok

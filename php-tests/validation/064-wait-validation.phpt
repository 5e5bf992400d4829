--TEST--
wait validation: negative, NAN and INF waits, refresh(0) and restore() with an empty token are ValueErrors
--EXTENSIONS--
redislock
--SKIPIF--
<?php require __DIR__ . '/../skipif.inc'; ?>
--FILE--
<?php
require __DIR__ . '/../config.inc';
$url = redislock_test_url();
$key = redislock_test_key('wait');
$lock = new RedisLock($key, 5, $url);
function show(callable $f): void
{
    show_outcome($f, fn ($r) => 'returned ' . var_export($r, true));
}
$called = 0;
show(fn() => $lock->acquire(-1));
show(fn() => $lock->acquire(-0.001));
show(fn() => $lock->acquire(NAN));
show(fn() => $lock->acquire(INF));
show(fn() => $lock->acquire(31536001));
show(function () use ($lock, &$called) { return $lock->withLock(function () use (&$called) { $called++; }, -1); });
show(function () use ($lock, &$called) { return $lock->withLock(function () use (&$called) { $called++; }, NAN); });
echo "callback called: $called\n";
show(fn() => $lock->refresh(0));
show(fn() => $lock->refresh(-1));
show(fn() => $lock->refresh(NAN));
show(fn() => RedisLock::restore($key, '', 5, $url));
show(fn() => RedisLock::restore($key, str_repeat('a', 1025), 5, $url));
// None of the above took the lock.
var_dump(redis_cmd($url, 'EXISTS', $key));
// Valid waits still work, and the bad refresh left a held lock untouched.
var_dump($lock->acquire(0));
show(fn() => $lock->refresh(0));
$pttl = redis_cmd($url, 'PTTL', $key);
var_dump($pttl > 4000 && $pttl <= 5000);
var_dump($lock->release());
var_dump($lock->acquire(0.05));
var_dump($lock->release());
?>
--EXPECT--
ValueError: RedisLock::acquire(): Argument #1 ($wait) must be greater than or equal to 0
ValueError: RedisLock::acquire(): Argument #1 ($wait) must be greater than or equal to 0
ValueError: RedisLock::acquire(): Argument #1 ($wait) must be a number, NaN given
ValueError: RedisLock::acquire(): Argument #1 ($wait) must be finite
ValueError: RedisLock::acquire(): Argument #1 ($wait) must be at most 31536000 seconds (one year)
ValueError: RedisLock::withLock(): Argument #2 ($wait) must be greater than or equal to 0
ValueError: RedisLock::withLock(): Argument #2 ($wait) must be a number, NaN given
callback called: 0
ValueError: RedisLock::refresh(): Argument #1 ($ttl) must be greater than 0
ValueError: RedisLock::refresh(): Argument #1 ($ttl) must be greater than 0
ValueError: RedisLock::refresh(): Argument #1 ($ttl) must be a number, NaN given
ValueError: RedisLock::restore(): Argument #2 ($token) must not be empty
ValueError: RedisLock::restore(): Argument #2 ($token) must be at most 1024 bytes long
int(0)
bool(true)
ValueError: RedisLock::refresh(): Argument #1 ($ttl) must be greater than 0
bool(true)
bool(true)
bool(true)
bool(true)

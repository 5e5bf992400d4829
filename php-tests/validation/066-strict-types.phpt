--TEST--
strict_types=1 in the calling file: numeric strings and bools are TypeErrors, int for a float parameter is still accepted
--EXTENSIONS--
redislock
--SKIPIF--
<?php require __DIR__ . '/../skipif.inc'; ?>
--FILE--
<?php
declare(strict_types=1);
require __DIR__ . '/../config.inc';
$url = redislock_test_url();
$key = redislock_test_key('strict');
function show(callable $f): void
{
    show_outcome($f, fn ($r) => 'ok ' . var_export($r, true));
}
show(fn() => new RedisLock($key, "2.5", $url));
show(fn() => new RedisLock($key, true, $url));
show(fn() => new RedisLock(123, 5, $url));
show(fn() => new RedisLock($key, 5, $url, ['retry_delay' => "0.5"]));
// A bool option takes 0/1 and ini words in both modes (they are settings,
// not arguments); other types are still refused.
show(fn() => new RedisLock($key, 5, $url, ['auto_release' => 1.5]));
show(fn() => new RedisLock($key, 5, $url, ['auto_release' => [1]]));
show(fn() => new RedisLock($key, 5, $url, ['prefix' => 5]));
show(fn() => RedisLock::restore($key, 42, 5, $url));
// int for a float is fine in strict mode too, like PHP's own functions.
show(fn() => (new RedisLock($key, 5, $url))->__debugInfo()['ttl']);
show(fn() => (new RedisLock($key, 5, $url, ['retry_delay' => 1, 'read_timeout' => 2]))->key() === $key);
$lock = new RedisLock($key, 3, $url);
show(fn() => $lock->acquire("0"));
show(fn() => $lock->acquire(false));
show(fn() => $lock->acquire(0));
show(fn() => $lock->refresh(2));
$pttl = redis_cmd($url, 'PTTL', $key);
var_dump($pttl > 1500 && $pttl <= 2000);
show(fn() => $lock->refresh("2"));
show(fn() => $lock->release());
// A non-strict file calling in is unaffected: the caller's mode counts.
file_put_contents($f = sys_get_temp_dir() . '/redislock-weak-' . getmypid() . '.php',
    '<?php return fn($k, $u) => (new RedisLock($k, "2.5", $u))->__debugInfo()["ttl"];');
$weak = require $f;
unlink($f);
show(fn() => $weak($key, $url));
?>
--EXPECT--
TypeError: RedisLock::__construct(): Argument #2 ($ttl) must be of type ?float, string given
TypeError: RedisLock::__construct(): Argument #2 ($ttl) must be of type ?float, bool given
TypeError: RedisLock::__construct(): Argument #1 ($key) must be of type string, int given
TypeError: RedisLock::__construct(): Argument #4 ($options) option "retry_delay" must be of type float, string given
ValueError: RedisLock::__construct(): Argument #4 ($options) option "auto_release" must be a bool, 0, 1, or one of "1", "0", "true", "false", "on", "off", "yes", "no", ""
TypeError: RedisLock::__construct(): Argument #4 ($options) option "auto_release" must be of type bool, array given
TypeError: RedisLock::__construct(): Argument #4 ($options) option "prefix" must be of type string, int given
TypeError: RedisLock::restore(): Argument #2 ($token) must be of type string, int given
ok 5.0
ok true
TypeError: RedisLock::acquire(): Argument #1 ($wait) must be of type float, string given
TypeError: RedisLock::acquire(): Argument #1 ($wait) must be of type float, bool given
ok true
ok true
bool(true)
TypeError: RedisLock::refresh(): Argument #1 ($ttl) must be of type ?float, string given
ok true
ok 2.5

--TEST--
weak mode: scalars are coerced like PHP's own functions; non-numeric strings and arrays are TypeErrors worded like PHP's
--EXTENSIONS--
redislock
--SKIPIF--
<?php require __DIR__ . '/../skipif.inc'; ?>
--FILE--
<?php
require __DIR__ . '/../config.inc';
$url = redislock_test_url();
$key = redislock_test_key('weak');
function show(callable $f): void
{
    show_outcome($f, fn ($r) => 'ok ' . var_export($r, true));
}
echo "-- ttl\n";
foreach (["2.5", " 3 ", "1e1", true, 5, 0.25] as $ttl) {
    show(fn() => (new RedisLock($key, $ttl, $url))->__debugInfo()['ttl']);
}
show(fn() => new RedisLock($key, false, $url));
foreach (["abc", "5 apples", "", [], new stdClass()] as $ttl) {
    show(fn() => new RedisLock($key, $ttl, $url));
}
// The same wording as PHP gives for a function of its own.
function php_own(?float $ttl) {}
try { php_own("abc"); } catch (TypeError $e) { echo "php: ", preg_replace('/, called in .*/', '', $e->getMessage()), "\n"; }

echo "-- a numeric-string ttl is really used\n";
$lock = new RedisLock($key, "2.5", $url);
var_dump($lock->acquire("0.1"));
$pttl = redis_cmd($url, 'PTTL', $key);
var_dump($pttl > 2000 && $pttl <= 2500);
var_dump($lock->refresh("4"));
$pttl = redis_cmd($url, 'PTTL', $key);
var_dump($pttl > 3500 && $pttl <= 4000);
var_dump($lock->release());
show(fn() => $lock->acquire("soon"));
show(fn() => $lock->acquire([]));
show(fn() => $lock->acquire(null));
show(fn() => $lock->refresh("x"));
show(fn() => $lock->withLock(fn() => 1, "x"));
show(fn() => $lock->withLock(fn($l) => $l->key() === $GLOBALS['key'], "0.05"));

echo "-- key\n";
show(fn() => (new RedisLock(123, 5, $url))->key());
show(fn() => (new RedisLock(1.5, 5, $url))->key());
show(fn() => (new RedisLock(true, 5, $url))->key());
show(fn() => (new RedisLock(-7, 5, $url))->key());
// Float keys read like PHP's own string conversion of the float.
foreach ([0.1 + 0.2, 1e20, -0.0] as $f) {
    $k = (new RedisLock($f, 5, $url))->key();
    echo $k === (string) $f ? "float key ok\n" : "float key " . var_export($k, true) . ", PHP gives " . var_export((string) $f, true) . "\n";
}
show(fn() => new RedisLock([], 5, $url));
show(fn() => new RedisLock(new stdClass(), 5, $url));
// An anonymous class name contains a NUL byte: the TypeError must still be
// a TypeError (PHP prints such names up to the NUL).
try {
    new RedisLock(new class {}, 5, $url);
    echo "anonymous object accepted\n";
} catch (TypeError $e) {
    echo "TypeError: ", $e->getMessage(), "\n";
} catch (Throwable $e) {
    echo get_class($e), " instead of TypeError: ", str_replace("\0", '\0', $e->getMessage()), "\n";
}

echo "-- options\n";
show(fn() => (new RedisLock('k', 5, $url, ['prefix' => 5]))->__debugInfo()['redisKey']);
show(fn() => (new RedisLock('k', 5, $url, ['auto_release' => 0]))->key());
show(fn() => (new RedisLock('k', 5, $url, ['retry_delay' => "0.5"]))->key());
show(fn() => new RedisLock('k', 5, $url, ['retry_delay' => "0.5s"]));
?>
--EXPECT--
-- ttl
ok 2.5
ok 3.0
ok 10.0
ok 1.0
ok 5.0
ok 0.25
ValueError: RedisLock::__construct(): Argument #2 ($ttl) must be greater than 0
TypeError: RedisLock::__construct(): Argument #2 ($ttl) must be of type ?float, string given
TypeError: RedisLock::__construct(): Argument #2 ($ttl) must be of type ?float, string given
TypeError: RedisLock::__construct(): Argument #2 ($ttl) must be of type ?float, string given
TypeError: RedisLock::__construct(): Argument #2 ($ttl) must be of type ?float, array given
TypeError: RedisLock::__construct(): Argument #2 ($ttl) must be of type ?float, stdClass given
php: php_own(): Argument #1 ($ttl) must be of type ?float, string given
-- a numeric-string ttl is really used
bool(true)
bool(true)
bool(true)
bool(true)
bool(true)
TypeError: RedisLock::acquire(): Argument #1 ($wait) must be of type float, string given
TypeError: RedisLock::acquire(): Argument #1 ($wait) must be of type float, array given
TypeError: RedisLock::acquire(): Argument #1 ($wait) must be of type float, null given
TypeError: RedisLock::refresh(): Argument #1 ($ttl) must be of type ?float, string given
TypeError: RedisLock::withLock(): Argument #2 ($wait) must be of type float, string given
ok true
-- key
ok '123'
ok '1.5'
ok '1'
ok '-7'
float key ok
float key ok
float key ok
TypeError: RedisLock::__construct(): Argument #1 ($key) must be of type string, array given
TypeError: RedisLock::__construct(): Argument #1 ($key) must be of type string, stdClass given
TypeError: RedisLock::__construct(): Argument #1 ($key) must be of type string, class@anonymous given
-- options
ok '5k'
ok 'k'
ok 'k'
TypeError: RedisLock::__construct(): Argument #4 ($options) option "retry_delay" must be of type float, string given

--TEST--
weak mode: a Stringable is accepted for $key, $token, $servers and string options like PHP's own string parameters; an exception from __toString() passes through unchanged
--EXTENSIONS--
redislock
--SKIPIF--
<?php require __DIR__ . '/../skipif.inc'; redislock_skip_unless_single('passes one server URL as a Stringable'); ?>
--FILE--
<?php
require __DIR__ . '/../config.inc';
final class Name implements Stringable
{
    public function __construct(private string $s) {}
    public function __toString(): string { return $this->s; }
}
// No "implements Stringable": PHP still treats a __toString() as one.
final class Legacy { public function __toString(): string { return 'legacy'; } }
final class Throws { public function __toString(): string { throw new LogicException('from __toString'); } }

$key = redislock_test_key('stringable');
$url = redislock_test_url();

$lock = new RedisLock(new Name($key), 5, new Name($url), ['prefix' => new Name('p134:')]);
var_dump($lock->key() === $key);
var_dump($lock->acquire());
var_dump(redis_cmd($url, 'GET', "p134:$key") === $lock->token());
$copy = RedisLock::restore(new Name($key), new Name($lock->token()), 5, [$url], ['prefix' => 'p134:']);
var_dump($copy->isAcquired());
var_dump($lock->release());
var_dump((new RedisLock(new Legacy(), 5, $url))->key());
// PHP's own function takes the same object the same way.
var_dump(strlen(new Name('abc')));

function show(callable $f): void
{
    show_outcome($f, previous: true);
}
// The exception thrown by __toString() reaches the caller, not a TypeError.
show(fn () => new RedisLock(new Throws(), 5, $url));
show(fn () => new RedisLock('k', 5, new Throws()));
show(fn () => new RedisLock('k', 5, $url, ['prefix' => new Throws()]));
show(fn () => RedisLock::restore('k', new Throws(), 5, $url));
// An object without __toString() is a TypeError, as for strlen().
show(fn () => new RedisLock(new stdClass(), 5, $url));
show(fn () => strlen(new stdClass()));
show(fn () => new RedisLock('k', 5, new stdClass()));
// An empty string from __toString() is an empty key.
show(fn () => new RedisLock(new Name(''), 5, $url));

// strict_types=1: a TypeError, like PHP's own functions.
$file = tempnam(sys_get_temp_dir(), 'redislock-134-');
file_put_contents($file, <<<'PHP'
<?php
declare(strict_types=1);
return [
    'key' => fn ($s) => new RedisLock($s, 5),
    'servers' => fn ($s) => new RedisLock('k', 5, $s),
    'token' => fn ($s) => RedisLock::restore('k', $s, 5),
    'prefix' => fn ($s) => new RedisLock('k', 5, null, ['prefix' => $s]),
    'strlen' => fn ($s) => strlen($s),
];
PHP);
$strict = require $file;
unlink($file);
foreach ($strict as $what => $f) {
    echo "$what: ";
    show(fn () => $f(new Name('x')));
}
?>
--EXPECT--
bool(true)
bool(true)
bool(true)
bool(true)
bool(true)
string(6) "legacy"
int(3)
LogicException: from __toString
LogicException: from __toString
LogicException: from __toString
LogicException: from __toString
TypeError: RedisLock::__construct(): Argument #1 ($key) must be of type string, stdClass given
TypeError: strlen(): Argument #1 ($string) must be of type string, stdClass given
TypeError: RedisLock::__construct(): Argument #3 ($servers) must be of type array|string|null, stdClass given
ValueError: RedisLock::__construct(): Argument #1 ($key) must not be empty
key: TypeError: RedisLock::__construct(): Argument #1 ($key) must be of type string, Name given
servers: TypeError: RedisLock::__construct(): Argument #3 ($servers) must be of type array|string|null, Name given
token: TypeError: RedisLock::restore(): Argument #2 ($token) must be of type string, Name given
prefix: TypeError: RedisLock::__construct(): Argument #4 ($options) option "prefix" must be of type string, Name given
strlen: TypeError: strlen(): Argument #1 ($string) must be of type string, Name given

--TEST--
Errors whose message would contain a NUL byte (anonymous classes, option names, URLs, paths) keep their intended class
--EXTENSIONS--
redislock
--FILE--
<?php
$url = 'redis://127.0.0.1:1';
function expect(string $class, string $prefix, callable $f): void
{
    try {
        $f();
        echo "no exception\n";
    } catch (Throwable $e) {
        $ok = get_class($e) === $class && str_starts_with($e->getMessage(), $prefix);
        echo $ok ? "ok $class\n" : "got " . get_class($e) . ': ' . str_replace("\0", '\0', $e->getMessage()) . "\n";
    }
}
expect(TypeError::class, 'RedisLock::__construct(): Argument #1 ($key) must be of type string, class@anonymous',
    fn() => new RedisLock(new class {}, 5, $url));
expect(TypeError::class, 'RedisLock::__construct(): Argument #2 ($ttl) must be of type ?float, class@anonymous',
    fn() => new RedisLock('k', new class {}, $url));
expect(TypeError::class, 'RedisLock::__construct(): Argument #3 ($servers) must be of type array|string|null, class@anonymous',
    fn() => new RedisLock('k', 5, new class {}));
expect(TypeError::class, 'RedisLock::__construct(): Argument #4 ($options) option "prefix" must be of type string, class@anonymous',
    fn() => new RedisLock('k', 5, $url, ['prefix' => new class {}]));
expect(TypeError::class, 'RedisLock::withLock(): Argument #1 ($callback) must be a valid callback',
    fn() => (new RedisLock('k', 5, $url))->withLock(new class {}));
expect(ValueError::class, 'RedisLock::__construct(): Argument #4 ($options) contains unknown option "a',
    fn() => new RedisLock('k', 5, $url, ["a\0b" => 1]));
expect(ValueError::class, 'RedisLock::__construct(): Argument #3 ($servers) has a malformed server URL "http://',
    fn() => new RedisLock('k', 5, "http://\0x"));
// A socket path with a NUL cannot be connected to: a ConnectionException
// (or a ValueError at construction), never a plain Error.
try {
    (new RedisLock('k', 5, "unix:///tmp/a%00b.sock", ['connect_timeout' => 0.2]))->acquire();
    echo "no exception\n";
} catch (RedisLock\ConnectionException | ValueError $e) {
    echo "ok path\n";
} catch (Throwable $e) {
    echo "got ", get_class($e), ': ', str_replace("\0", '\0', $e->getMessage()), "\n";
}
?>
--EXPECT--
ok TypeError
ok TypeError
ok TypeError
ok TypeError
ok TypeError
ok ValueError
ok ValueError
ok path

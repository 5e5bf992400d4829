--TEST--
servers validation: malformed URLs and non-string elements are ValueErrors, wrong types TypeErrors; passwords never shown
--EXTENSIONS--
redislock
--FILE--
<?php
require __DIR__ . '/../config.inc';
$secret = 'hunter2SECRET';
$bad = [
    "127.0.0.1:6379",
    "user:$secret@127.0.0.1:6379",
    "http://127.0.0.1:6379",
    "http://:$secret@127.0.0.1",
    "redis://",
    "redis://127.0.0.1:0",
    "redis://127.0.0.1:99999",
    "redis://:$secret@127.0.0.1:abc",
    "redis://bob:$secret@127.0.0.1:notaport/1",
    "redis://127.0.0.1:6379/x",
    "redis://:$secret@127.0.0.1:6379/-1",
    "redis://127.0.0.1:6379?timeout=1",
    "rediss://:$secret@[::1",
    "unix://relative.sock",
    "unix:///tmp/redis.sock?foo=1",
    "unix:///tmp/redis.sock?password=$secret&foo=1",
    "unix:///tmp/redis.sock?db=abc&password=$secret",
    "redis://u:pa%zz$secret@127.0.0.1",
    // Passwords someone forgot to URL-encode: '/', '?', '#' or '@' inside.
    "redis://:$secret/x@127.0.0.1:6379",
    "redis://u:pa/$secret@127.0.0.1",
    "redis://:p@ss/$secret@127.0.0.1",
    "redis://:pa?$secret@127.0.0.1",
    "redis://:pa#$secret@127.0.0.1:6379",
    "rediss://u:$secret/@127.0.0.1",
];
$leaks = 0;
foreach ($bad as $url) {
    foreach ([$url, ['redis://127.0.0.1:1', $url]] as $servers) {
        try {
            new RedisLock('k', 5, $servers);
            echo "accepted: $url\n";
        } catch (ValueError $e) {
            $m = $e->getMessage();
            if (!str_starts_with($m, 'RedisLock::__construct(): Argument #3 ($servers) has a malformed server URL "')) {
                echo "unexpected message: $m\n";
            }
            if (str_contains($m, $secret)) {
                $leaks++;
                echo "LEAK: $m\n";
            }
        }
    }
    try {
        RedisLock::restore('k', 'tok', 5, $url);
        echo "restore accepted: $url\n";
    } catch (ValueError $e) {
        if (!str_starts_with($e->getMessage(), 'RedisLock::restore(): Argument #4 ($servers) has a malformed')) {
            echo "unexpected restore message: ", $e->getMessage(), "\n";
        }
        if (str_contains($e->getMessage(), $secret)) {
            $leaks++;
            echo "LEAK: ", $e->getMessage(), "\n";
        }
    }
}
echo "leaks: $leaks\n";

function show(callable $f): void
{
    show_outcome($f);
}
// A few exact messages.
show(fn() => new RedisLock('k', 5, 'http://127.0.0.1'));
show(fn() => new RedisLock('k', 5, "redis://bob:$secret@127.0.0.1:bad"));
show(fn() => new RedisLock('k', 5, "unix:///tmp/r.sock?db=1&password=$secret&x=1"));
// Non-string elements of the list.
show(fn() => new RedisLock('k', 5, ['redis://127.0.0.1:1', 5]));
show(fn() => new RedisLock('k', 5, [null]));
show(fn() => new RedisLock('k', 5, [['redis://127.0.0.1:1']]));
show(fn() => new RedisLock('k', 5, []));
// Wrong types.
show(fn() => new RedisLock('k', 5, new stdClass()));
show(fn() => new RedisLock('k', 5, 6379));
show(fn() => new RedisLock('k', 5, 1.5));
show(fn() => new RedisLock('k', 5, true));
?>
--EXPECT--
leaks: 0
ValueError: RedisLock::__construct(): Argument #3 ($servers) has a malformed server URL "http://127.0.0.1": unknown scheme, expected redis, rediss or unix
ValueError: RedisLock::__construct(): Argument #3 ($servers) has a malformed server URL "redis://bob:***@127.0.0.1:bad": port must be a number from 1 to 65535
ValueError: RedisLock::__construct(): Argument #3 ($servers) has a malformed server URL "unix:///tmp/r.sock?db=1&password=***&***": unknown query parameter (known: db, user, password; a '&' or '=' in a password must be URL-encoded)
ValueError: RedisLock::__construct(): Argument #3 ($servers) must contain only URL strings, int found
ValueError: RedisLock::__construct(): Argument #3 ($servers) must contain only URL strings, null found
ValueError: RedisLock::__construct(): Argument #3 ($servers) must contain only URL strings, array found
ValueError: RedisLock::__construct(): Argument #3 ($servers) must not be empty
TypeError: RedisLock::__construct(): Argument #3 ($servers) must be of type array|string|null, stdClass given
TypeError: RedisLock::__construct(): Argument #3 ($servers) must be of type array|string|null, int given
TypeError: RedisLock::__construct(): Argument #3 ($servers) must be of type array|string|null, float given
TypeError: RedisLock::__construct(): Argument #3 ($servers) must be of type array|string|null, bool given

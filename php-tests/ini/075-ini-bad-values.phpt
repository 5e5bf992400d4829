--TEST--
Bad php.ini values raise a ValueError naming the setting when a lock is built
--EXTENSIONS--
redislock
--FILE--
<?php
require __DIR__ . '/../config.inc';
function show(callable $f): void
{
    show_outcome($f);
}
$url = 'redis://127.0.0.1:1';
foreach ([
    ['redislock.connect_timeout', 'abc'],
    ['redislock.connect_timeout', '0'],
    ['redislock.read_timeout', '-1'],
    ['redislock.read_timeout', '5 apples'],
    ['redislock.default_ttl', 'soon'],
    ['redislock.default_ttl', '0'],
    ['redislock.default_ttl', '99999999999'],
] as [$name, $value]) {
    $old = ini_set($name, $value);
    echo "$name=$value\n";
    show(fn() => new RedisLock('k', 5, $url));
    ini_set($name, $old);
}
// A bad server list is reported as the ini setting's fault (the caller
// passed no $servers), and only when it is used.
ini_set('redislock.servers', 'http://127.0.0.1:1');
echo "redislock.servers=http://127.0.0.1:1\n";
show(fn() => new RedisLock('k', 5));
show(fn() => new RedisLock('k', 5, $url));
ini_set('redislock.servers', 'redis://:hunter2@127.0.0.1:bad');
show(function () {
    try {
        new RedisLock('k', 5);
    } catch (ValueError $e) {
        echo str_contains($e->getMessage(), 'hunter2') ? "LEAK\n" : "no leak\n";
        throw $e;
    }
});
ini_set('redislock.servers', '');
show(fn() => new RedisLock('k', 5));
// Good values again: accepted.
ini_set('redislock.servers', $url);
ini_set('redislock.connect_timeout', '0.25');
ini_set('redislock.read_timeout', '1.5');
ini_set('redislock.default_ttl', ' 4 ');
show(fn() => new RedisLock('k'));
?>
--EXPECT--
redislock.connect_timeout=abc
ValueError: RedisLock::__construct(): redislock.connect_timeout must be a number of seconds, "abc" set
redislock.connect_timeout=0
ValueError: RedisLock::__construct(): redislock.connect_timeout must be greater than 0
redislock.read_timeout=-1
ValueError: RedisLock::__construct(): redislock.read_timeout must be greater than 0
redislock.read_timeout=5 apples
ValueError: RedisLock::__construct(): redislock.read_timeout must be a number of seconds, "5 apples" set
redislock.default_ttl=soon
ValueError: RedisLock::__construct(): redislock.default_ttl must be a number of seconds, "soon" set
redislock.default_ttl=0
ValueError: RedisLock::__construct(): redislock.default_ttl must be greater than 0
redislock.default_ttl=99999999999
ValueError: RedisLock::__construct(): redislock.default_ttl must be at most 31536000 seconds (one year)
redislock.servers=http://127.0.0.1:1
ValueError: RedisLock::__construct(): redislock.servers has a malformed server URL "http://127.0.0.1:1": unknown scheme, expected redis, rediss or unix
accepted
no leak
ValueError: RedisLock::__construct(): redislock.servers has a malformed server URL "redis://:***@127.0.0.1:bad": port must be a number from 1 to 65535
ValueError: RedisLock::__construct(): redislock.servers must name at least one server URL
accepted

--TEST--
secrets: every way of writing a password in a URL is masked in messages, traces and var_dump (no echo of :PW, u:PW, :PW:port, ?pass=, ?password=, rediss://)
--EXTENSIONS--
redislock
--INI--
zend.exception_ignore_args=0
--FILE--
<?php
$pw = 'Hunter2xPW';
$forms = [
    // No host after the password: never a host name, never echoed.
    "redis://:$pw",
    "redis://u:$pw",
    "redis://:$pw:7100",
    "redis://u:$pw:7100/0",
    "redis://:$pw/1",
    "rediss://:$pw",
    "rediss://u:$pw",
    "rediss://:$pw:7100",
    "redis://[:$pw]:7100",
    // Credentials in a query string or fragment.
    "unix:///tmp/x.sock?pass=$pw",
    "unix:///tmp/x.sock?password=$pw&x=1",
    "unix:///tmp/x.sock?db=x&password=$pw",
    "unix:///tmp/x.sock?$pw",
    "redis://127.0.0.1:1?password=$pw",
    "redis://127.0.0.1:1#$pw",
    // Malformed after a well-formed password.
    "redis://:$pw@127.0.0.1:x",
    "rediss://u:$pw@127.0.0.1:0",
    "redis://u:$pw@127.0.0.1:1/x",
    // Well-formed: the connection error shows the URL masked.
    "redis://:$pw@127.0.0.1:1",
    "redis://u:$pw@127.0.0.1:1/2",
    // A user name without a password (refused, never echoed): most often a
    // password without its ':'.
    "redis://$pw@127.0.0.1:1",
    "rediss://u:$pw@127.0.0.1:1",
    "unix:///nonexistent-redislock/x.sock?password=$pw",
    "unix:///nonexistent-redislock/x.sock?user=u&password=$pw&db=1",
];

/**
 * Runs $f; returns [what happened, everything PHP would print about it].
 * (The closure carries the URL: this test's own frame must not show it.)
 */
function attempt(#[\SensitiveParameter] callable $f): array
{
    ob_start();
    try {
        $lock = $f();
        var_dump($lock);
        print_r($lock);
        echo "\n";
        $outcome = 'accepted';
        try {
            $lock->acquire();
            $outcome .= ', acquired?!';
        } catch (RedisLock\ConnectionException $e) {
            echo $e->getMessage(), "\n", $e, "\n";
            print_r($e);
            $outcome .= ', ' . get_class($e) . ' on acquire';
        }
    } catch (Throwable $e) {
        echo $e->getMessage(), "\n", $e, "\n";
        var_dump($e);
        $outcome = get_class($e) . ': ' . $e->getMessage();
    }
    return [$outcome, ob_get_clean()];
}

$leaks = 0;
foreach ($forms as $url) {
    $opts = ['connect_timeout' => 0.5];
    $results = [
        attempt(fn () => new RedisLock('k131', 1.0, $url, $opts)),
        attempt(fn () => new RedisLock('k131', 1.0, ['redis://127.0.0.1:1', $url], $opts)),
        attempt(fn () => RedisLock::restore('k131', 'tok', 1.0, $url, $opts)),
    ];
    foreach ($results as [$outcome, $out]) {
        if (str_contains($out, $pw) || str_contains($outcome, $pw)) {
            $leaks++;
            echo "LEAK for $url:\n$out\n";
        }
    }
    echo str_replace($pw, 'PW', $url), "\n    ", $results[0][0], "\n";
}
echo "leaks: $leaks\n";
?>
--EXPECT--
redis://:PW
    ValueError: RedisLock::__construct(): Argument #3 ($servers) has a malformed server URL "redis://:***": missing host (a password goes before the host, followed by @: redis://[user]:password@host[:port])
redis://u:PW
    ValueError: RedisLock::__construct(): Argument #3 ($servers) has a malformed server URL "redis://u:***": port must be a number from 1 to 65535 (a password goes before the host, followed by @: redis://[user]:password@host[:port])
redis://:PW:7100
    ValueError: RedisLock::__construct(): Argument #3 ($servers) has a malformed server URL "redis://:***": missing host (a password goes before the host, followed by @: redis://[user]:password@host[:port])
redis://u:PW:7100/0
    ValueError: RedisLock::__construct(): Argument #3 ($servers) has a malformed server URL "redis://u:***": port must be a number from 1 to 65535 (a password goes before the host, followed by @: redis://[user]:password@host[:port])
redis://:PW/1
    ValueError: RedisLock::__construct(): Argument #3 ($servers) has a malformed server URL "redis://:***": missing host (a password goes before the host, followed by @: redis://[user]:password@host[:port])
rediss://:PW
    ValueError: RedisLock::__construct(): Argument #3 ($servers) has a malformed server URL "rediss://:***": missing host (a password goes before the host, followed by @: rediss://[user]:password@host[:port])
rediss://u:PW
    ValueError: RedisLock::__construct(): Argument #3 ($servers) has a malformed server URL "rediss://u:***": port must be a number from 1 to 65535 (a password goes before the host, followed by @: rediss://[user]:password@host[:port])
rediss://:PW:7100
    ValueError: RedisLock::__construct(): Argument #3 ($servers) has a malformed server URL "rediss://:***": missing host (a password goes before the host, followed by @: rediss://[user]:password@host[:port])
redis://[:PW]:7100
    ValueError: RedisLock::__construct(): Argument #3 ($servers) has a malformed server URL "redis://***": invalid IPv6 address in [brackets]
unix:///tmp/x.sock?pass=PW
    ValueError: RedisLock::__construct(): Argument #3 ($servers) has a malformed server URL "unix:///tmp/x.sock?pass=***": unknown query parameter (known: db, user, password; a '&' or '=' in a password must be URL-encoded)
unix:///tmp/x.sock?password=PW&x=1
    ValueError: RedisLock::__construct(): Argument #3 ($servers) has a malformed server URL "unix:///tmp/x.sock?password=***&***": unknown query parameter (known: db, user, password; a '&' or '=' in a password must be URL-encoded)
unix:///tmp/x.sock?db=x&password=PW
    ValueError: RedisLock::__construct(): Argument #3 ($servers) has a malformed server URL "unix:///tmp/x.sock?db=x&password=***": the database must be a number from 0
unix:///tmp/x.sock?PW
    ValueError: RedisLock::__construct(): Argument #3 ($servers) has a malformed server URL "unix:///tmp/x.sock?***": every query parameter needs a name and a value (known: db, user, password)
redis://127.0.0.1:1?password=PW
    ValueError: RedisLock::__construct(): Argument #3 ($servers) has a malformed server URL "redis://127.0.0.1:1?password=***": query strings and fragments are not supported in redis:// URLs
redis://127.0.0.1:1#PW
    ValueError: RedisLock::__construct(): Argument #3 ($servers) has a malformed server URL "redis://127.0.0.1:1#***": query strings and fragments are not supported in redis:// URLs
redis://:PW@127.0.0.1:x
    ValueError: RedisLock::__construct(): Argument #3 ($servers) has a malformed server URL "redis://:***@127.0.0.1:x": port must be a number from 1 to 65535
rediss://u:PW@127.0.0.1:0
    ValueError: RedisLock::__construct(): Argument #3 ($servers) has a malformed server URL "rediss://u:***@127.0.0.1:0": port must be a number from 1 to 65535
redis://u:PW@127.0.0.1:1/x
    ValueError: RedisLock::__construct(): Argument #3 ($servers) has a malformed server URL "redis://u:***@127.0.0.1:1/x": the database must be a number from 0
redis://:PW@127.0.0.1:1
    accepted, RedisLock\ConnectionException on acquire
redis://u:PW@127.0.0.1:1/2
    accepted, RedisLock\ConnectionException on acquire
redis://PW@127.0.0.1:1
    ValueError: RedisLock::__construct(): Argument #3 ($servers) has a malformed server URL "redis://***@127.0.0.1:1": names a user but no password, so no AUTH could be sent: write user:password@ (or :password@ for a password alone)
rediss://u:PW@127.0.0.1:1
    accepted, RedisLock\ConnectionException on acquire
unix:///nonexistent-redislock/x.sock?password=PW
    accepted, RedisLock\ConnectionException on acquire
unix:///nonexistent-redislock/x.sock?user=u&password=PW&db=1
    accepted, RedisLock\ConnectionException on acquire
leaks: 0

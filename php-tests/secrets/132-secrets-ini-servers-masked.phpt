--TEST--
secrets: passwords in the ini setting redislock.servers are masked in every message, trace, var_dump and phpinfo, in every URL form
--EXTENSIONS--
redislock
--FILE--
<?php
require __DIR__ . '/../config.inc';
$pw = 'Hunter2iniPW';
$settings = [
    "redis://:$pw",
    "redis://u:$pw",
    "redis://:$pw:7100",
    "rediss://u:$pw",
    "redis://u:pa/$pw@127.0.0.1",
    "unix:///tmp/x.sock?pass=$pw",
    "unix:///tmp/x.sock?password=$pw&x=1",
    "redis://127.0.0.1:1, redis://:$pw",
    // A ',' in a password splits the list.
    "redis://:pa,$pw@127.0.0.1:1",
    // Well-formed: the connection error shows the URL masked.
    "redis://:$pw@127.0.0.1:1",
    "rediss://u:$pw@127.0.0.1:1/3",
    "unix:///nonexistent-redislock/x.sock?password=$pw",
];
// The lock takes its servers from the setting (null $servers).
$child = <<<'PHP'
ob_start();
try {
    $lock = new RedisLock('k132', 1.0, null, ['connect_timeout' => 0.5]);
    var_dump($lock);
    $lock->acquire();
    echo "acquired?!\n";
} catch (Throwable $e) {
    $result = get_class($e) . ': ' . $e->getMessage();
    var_dump($e);
    echo $e, "\n";
}
phpinfo(INFO_MODULES);
$out = ob_get_clean();
echo $result, "\n", $out;
PHP;
$leaks = 0;
foreach ($settings as $value) {
    [$code, $out] = redislock_run_child($child, [
        'redislock.servers' => '"' . $value . '"',
        'zend.exception_ignore_args' => '0',
    ]);
    if (str_contains($out, $pw)) {
        $leaks++;
        echo "LEAK for $value:\n$out\n";
    }
    $first = strtok($out, "\n");
    // Connection errors come from the transport: only their class is fixed.
    if (str_starts_with($first, 'RedisLock\ConnectionException')) {
        $first = 'RedisLock\ConnectionException';
    }
    if (!str_contains($out, 'redislock support => enabled')) {
        echo "no phpinfo section\n";
    }
    echo str_replace($pw, 'PW', $value), "\n    ", $first, "\n";
}
echo "leaks: $leaks\n";
?>
--EXPECT--
redis://:PW
    ValueError: RedisLock::__construct(): redislock.servers has a malformed server URL "redis://:***": missing host (a password goes before the host, followed by @: redis://[user]:password@host[:port])
redis://u:PW
    ValueError: RedisLock::__construct(): redislock.servers has a malformed server URL "redis://u:***": port must be a number from 1 to 65535 (a password goes before the host, followed by @: redis://[user]:password@host[:port])
redis://:PW:7100
    ValueError: RedisLock::__construct(): redislock.servers has a malformed server URL "redis://:***": missing host (a password goes before the host, followed by @: redis://[user]:password@host[:port])
rediss://u:PW
    ValueError: RedisLock::__construct(): redislock.servers has a malformed server URL "rediss://u:***": port must be a number from 1 to 65535 (a password goes before the host, followed by @: rediss://[user]:password@host[:port])
redis://u:pa/PW@127.0.0.1
    ValueError: RedisLock::__construct(): redislock.servers has a malformed server URL "redis://u:***@127.0.0.1": the user name or password contains an unencoded '/', '?' or '#'; URL-encode the user name and password, e.g. with rawurlencode()
unix:///tmp/x.sock?pass=PW
    ValueError: RedisLock::__construct(): redislock.servers has a malformed server URL "unix:///tmp/x.sock?pass=***": unknown query parameter (known: db, user, password; a '&' or '=' in a password must be URL-encoded)
unix:///tmp/x.sock?password=PW&x=1
    ValueError: RedisLock::__construct(): redislock.servers has a malformed server URL "unix:///tmp/x.sock?password=***&***": unknown query parameter (known: db, user, password; a '&' or '=' in a password must be URL-encoded)
redis://127.0.0.1:1, redis://:PW
    ValueError: RedisLock::__construct(): redislock.servers has a malformed server URL "redis://:***": missing host (a password goes before the host, followed by @: redis://[user]:password@host[:port])
redis://:pa,PW@127.0.0.1:1
    ValueError: RedisLock::__construct(): redislock.servers has a malformed server URL "redis://:***": missing host (a password goes before the host, followed by @: redis://[user]:password@host[:port]) (the list is split at commas: a ',' in a password must be URL-encoded as %2C)
redis://:PW@127.0.0.1:1
    RedisLock\ConnectionException
rediss://u:PW@127.0.0.1:1/3
    RedisLock\ConnectionException
unix:///nonexistent-redislock/x.sock?password=PW
    RedisLock\ConnectionException
leaks: 0

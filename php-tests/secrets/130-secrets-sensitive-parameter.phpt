--TEST--
secrets: $servers and $options of __construct(), restore(), inspect() and diagnose() are #[\SensitiveParameter]; exception traces never show a password
--EXTENSIONS--
redislock
--INI--
zend.exception_ignore_args=0
--FILE--
<?php
$secret = 'secretPW4130';

// Reflection shows the attribute where a password can travel, nowhere else.
foreach (['__construct', 'restore', 'inspect', 'diagnose'] as $method) {
    foreach ((new ReflectionMethod('RedisLock', $method))->getParameters() as $p) {
        $names = array_map(fn ($a) => $a->getName(), $p->getAttributes());
        printf("%s \$%s: %s\n", $method, $p->getName(), $names ? implode(', ', $names) : '-');
    }
}

/** Every rendering of an exception that PHP code commonly logs. */
function renderings(Throwable $e): string
{
    ob_start();
    var_dump($e);
    print_r($e);
    var_export($e->getTrace());
    echo $e->getTraceAsString(), "\n", $e, "\n";
    echo json_encode($e->getTrace(), JSON_PARTIAL_OUTPUT_ON_ERROR), "\n";
    return ob_get_clean();
}

$url = "redis://:$secret@127.0.0.1:1";
// The last entry is invalid whether or not this version knows sentinel_password.
$options = ['prefix' => $secret, 'sentinel_password' => $secret, 'connect_timeout' => -1];
$cases = [
    // Validation errors thrown inside the constructor / restore().
    'construct: empty key' => fn () => new RedisLock('', 1.0, $url),
    'construct: empty key, list' => fn () => new RedisLock('', 1.0, [$url, $url], $options),
    'construct: bad ttl, options' => fn () => new RedisLock('k', -1.0, $url, $options),
    'construct: options' => fn () => new RedisLock('k', 1.0, $url, $options),
    'restore: empty key' => fn () => RedisLock::restore('', 'token', 1.0, $url, $options),
    'restore: options' => fn () => RedisLock::restore('k', 'token', 1.0, $url, $options),
    // Connection refused, thrown by a later call (restore() reads which
    // hold the token has: it is refused itself).
    'acquire: refused' => fn () => (new RedisLock('k', 1.0, $url))->acquire(),
    'restore + release: refused' => fn () => RedisLock::restore('k', 'token', 1.0, $url)->release(),
    'inspect: options' => fn () => RedisLock::inspect('k', $url, $options),
    'inspect: refused' => fn () => RedisLock::inspect('k', $url),
    'diagnose: options' => fn () => RedisLock::diagnose('k', $url, $options),
    // A server that does not answer is a finding, not an exception.
    'diagnose: refused' => function () use ($url, $secret) {
        $report = RedisLock::diagnose('k', $url);
        echo 'diagnose: refused: ', $report[0]['verdict'], ', ', $report[0]['findings'][0]['reason'], ', ',
            str_contains(json_encode($report), $secret) ? 'LEAK' : 'no leak', "\n";
        throw new LogicException('reported');
    },
];
foreach ($cases as $name => $case) {
    try {
        $case();
        echo "$name: no exception\n";
    } catch (Throwable $e) {
        $out = renderings($e);
        $args = $e->getTrace()[0]['args'] ?? [];
        $masked = array_map(fn ($a) => is_object($a) ? get_class($a) : gettype($a), $args);
        printf("%s: %s, trace args [%s], %s\n", $name, get_class($e), implode(', ', $masked),
            str_contains($out, $secret) ? 'LEAK' : 'no leak');
    }
}
?>
--EXPECT--
__construct $key: -
__construct $ttl: -
__construct $servers: SensitiveParameter
__construct $options: SensitiveParameter
restore $key: -
restore $token: SensitiveParameter
restore $ttl: -
restore $servers: SensitiveParameter
restore $options: SensitiveParameter
inspect $key: -
inspect $servers: SensitiveParameter
inspect $options: SensitiveParameter
diagnose $key: -
diagnose $servers: SensitiveParameter
diagnose $options: SensitiveParameter
construct: empty key: ValueError, trace args [string, double, SensitiveParameterValue], no leak
construct: empty key, list: ValueError, trace args [string, double, SensitiveParameterValue, SensitiveParameterValue], no leak
construct: bad ttl, options: ValueError, trace args [string, double, SensitiveParameterValue, SensitiveParameterValue], no leak
construct: options: ValueError, trace args [string, double, SensitiveParameterValue, SensitiveParameterValue], no leak
restore: empty key: ValueError, trace args [string, SensitiveParameterValue, double, SensitiveParameterValue, SensitiveParameterValue], no leak
restore: options: ValueError, trace args [string, SensitiveParameterValue, double, SensitiveParameterValue, SensitiveParameterValue], no leak
acquire: refused: RedisLock\ConnectionException, trace args [], no leak
restore + release: refused: RedisLock\ConnectionException, trace args [string, SensitiveParameterValue, double, SensitiveParameterValue], no leak
inspect: options: ValueError, trace args [string, SensitiveParameterValue, SensitiveParameterValue], no leak
inspect: refused: RedisLock\ConnectionException, trace args [string, SensitiveParameterValue], no leak
diagnose: options: ValueError, trace args [string, SensitiveParameterValue, SensitiveParameterValue], no leak
diagnose: refused: unknown, unreachable, no leak
diagnose: refused: LogicException, trace args [], no leak

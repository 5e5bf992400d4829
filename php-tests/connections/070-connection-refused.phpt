--TEST--
Connection refused: acquire() throws RedisLock\ConnectionException quickly, naming the server (password masked)
--EXTENSIONS--
redislock
--FILE--
<?php
// A loopback port nobody listens on.
$sock = stream_socket_server('tcp://127.0.0.1:0', $errno, $errstr);
$name = stream_socket_get_name($sock, false);
fclose($sock);
$port = (int) substr($name, strrpos($name, ':') + 1);

function attempt(string $what, callable $f, int $port): void
{
    $t = microtime(true);
    try {
        $r = $f();
        echo "$what: returned ", var_export($r, true), "\n";
    } catch (Throwable $e) {
        $elapsed = microtime(true) - $t;
        echo "$what: ", get_class($e), ": ", str_replace((string) $port, 'PORT', $e->getMessage()), "\n";
        echo $elapsed < 1.0 ? "fast\n" : "slow: {$elapsed}s\n";
        if (str_contains($e->getMessage(), 'sekret')) {
            echo "PASSWORD LEAKED\n";
        }
    }
}
$lock = new RedisLock('refused', 5, "redis://127.0.0.1:$port");
attempt('acquire', fn() => $lock->acquire(), $port);
attempt('acquire again', fn() => $lock->acquire(), $port);
attempt('withLock', fn() => $lock->withLock(fn() => 'ran'), $port);
attempt('isAcquired', fn() => $lock->isAcquired(), $port);
attempt('forceRelease', fn() => $lock->forceRelease(), $port);
$auth = new RedisLock('refused', 5, "redis://alice:sekret@127.0.0.1:$port/4");
attempt('with password', fn() => $auth->acquire(), $port);
var_dump($lock->token(), $lock->release());
?>
--EXPECTF--
acquire: RedisLock\ConnectionException: Redis redis://127.0.0.1:PORT/0: unreachable: %s
fast
acquire again: RedisLock\ConnectionException: Redis redis://127.0.0.1:PORT/0: unreachable: %s
fast
withLock: RedisLock\ConnectionException: Redis redis://127.0.0.1:PORT/0: unreachable: %s
fast
isAcquired: returned false
forceRelease: RedisLock\ConnectionException: Redis redis://127.0.0.1:PORT/0: unreachable: %s
fast
with password: RedisLock\ConnectionException: Redis redis://alice:***@127.0.0.1:PORT/4: unreachable: %s
fast
NULL
bool(false)

--TEST--
TLS: rediss:// with tls_ca works; without it the certificate is rejected (verification on by default); tls_verify => false works
--EXTENSIONS--
redislock
--SKIPIF--
<?php require __DIR__ . '/../skipif.inc'; ?>
--FILE--
<?php
require __DIR__ . '/../config.inc';
// A TLS server with a fresh CA and a certificate for 127.0.0.1 and
// localhost (in its directory), listening in plain text too: the test reads
// Redis through the plain port, locks use the TLS port.
$redis = TestRedis::start(['--tls-and-plain']);
$dir = $redis->dir;
$tlsPort = $redis->port;
$plain = "redis://127.0.0.1:{$redis->plainPort}";
$key = redislock_test_key('tls');

function attempt(string $what, string $url, array $options): void
{
    global $plain, $key, $tlsPort, $dir;
    $lock = new RedisLock($key, 5, $url, $options + ['connect_timeout' => 1, 'read_timeout' => 1]);
    try {
        $ok = $lock->acquire();
        $stored = redis_cmd($plain, 'GET', $key) === $lock->token();
        echo "$what: acquire ", var_export($ok, true), ", stored ", var_export($stored, true), ", release ", var_export($lock->release(), true), "\n";
    } catch (Throwable $e) {
        $m = $e->getMessage();
        $why = match (true) {
            str_contains($m, 'certificate verify failed') => 'certificate verify failed',
            str_contains($m, 'cannot read') => 'cannot read the CA file',
            default => $m,
        };
        echo "$what: ", get_class($e), ": ", str_starts_with($m, "Redis $url/0: ") ? 'names the server' : 'does not name the server', "; $why\n";
    }
}
attempt('localhost + tls_ca', "rediss://localhost:$tlsPort", ['tls_ca' => "$dir/ca.crt"]);
attempt('127.0.0.1 + tls_ca', "rediss://127.0.0.1:$tlsPort", ['tls_ca' => "$dir/ca.crt"]);
attempt('no tls_ca', "rediss://localhost:$tlsPort", []);
attempt('tls_verify false', "rediss://localhost:$tlsPort", ['tls_verify' => false]);
attempt('missing tls_ca file', "rediss://localhost:$tlsPort", ['tls_ca' => "$dir/nope.crt"]);
attempt('wrong CA', "rediss://localhost:$tlsPort", ['tls_ca' => "$dir/server.crt"]);
// The verified lock is still fine after the failures (separate pooled connections).
attempt('again with tls_ca', "rediss://localhost:$tlsPort", ['tls_ca' => "$dir/ca.crt"]);
unset($redis);
?>
--EXPECT--
localhost + tls_ca: acquire true, stored true, release true
127.0.0.1 + tls_ca: acquire true, stored true, release true
no tls_ca: RedisLock\ConnectionException: names the server; certificate verify failed
tls_verify false: acquire true, stored true, release true
missing tls_ca file: RedisLock\ConnectionException: names the server; cannot read the CA file
wrong CA: RedisLock\ConnectionException: names the server; certificate verify failed
again with tls_ca: acquire true, stored true, release true

--TEST--
TLS: rediss:// with tls_ca works; without it the certificate is rejected (verification on by default); tls_verify => false works
--EXTENSIONS--
redislock
--SKIPIF--
<?php require __DIR__ . '/../skipif.inc'; ?>
--FILE--
<?php
require __DIR__ . '/../config.inc';
$dir = sys_get_temp_dir() . '/rl-tls-' . getmypid() . '-' . bin2hex(random_bytes(3));
mkdir($dir, 0700);
function sh(string $cmd): void
{
    exec($cmd . ' 2>&1', $out, $rc);
    if ($rc !== 0) {
        echo "failed: $cmd\n", implode("\n", $out), "\n";
    }
}
$ec = '-newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes';
sh("cd $dir && openssl req -x509 -new $ec -keyout ca.key -out ca.crt -days 2 -subj '/CN=redislock test CA'");
sh("cd $dir && openssl req -new $ec -keyout server.key -out server.csr -subj '/CN=localhost'");
file_put_contents("$dir/ext.cnf", "subjectAltName=IP:127.0.0.1,DNS:localhost\n");
sh("cd $dir && openssl x509 -req -in server.csr -CA ca.crt -CAkey ca.key -CAcreateserial -out server.crt -days 2 -extfile ext.cnf");

// The plain port stays open (TestRedis waits on it, and the test reads
// Redis through it); locks use the TLS port, drawn like TestRedis draws its
// ports (below the ephemeral range), and drawn again if someone else's
// server takes it before ours binds it.
for ($try = 1; ; $try++) {
    $tlsPort = random_int(20000, 31999);
    $probe = @stream_socket_server("tcp://127.0.0.1:$tlsPort");
    if (!$probe) {
        continue;
    }
    fclose($probe);
    try {
        $redis = TestRedis::start(['--tls-port', (string) $tlsPort, '--tls-cert-file', "$dir/server.crt",
            '--tls-key-file', "$dir/server.key", '--tls-ca-cert-file', "$dir/ca.crt", '--tls-auth-clients', 'no']);
        break;
    } catch (RuntimeException $e) {
        if ($try >= 5) {
            throw $e;
        }
    }
}
$plain = $redis->url();
$deadline = microtime(true) + 5;
while (!($c = @fsockopen('127.0.0.1', $tlsPort, $errno, $errstr, 0.1)) && microtime(true) < $deadline) {
    usleep(10000);
}
if ($c) fclose($c);
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
array_map('unlink', glob("$dir/*"));
rmdir($dir);
?>
--EXPECT--
localhost + tls_ca: acquire true, stored true, release true
127.0.0.1 + tls_ca: acquire true, stored true, release true
no tls_ca: RedisLock\ConnectionException: names the server; certificate verify failed
tls_verify false: acquire true, stored true, release true
missing tls_ca file: RedisLock\ConnectionException: names the server; cannot read the CA file
wrong CA: RedisLock\ConnectionException: names the server; certificate verify failed
again with tls_ca: acquire true, stored true, release true

--TEST--
rediss:// to a server that does not speak TLS fails within the timeouts instead of hanging
--EXTENSIONS--
redislock
--SKIPIF--
<?php require __DIR__ . '/../skipif.inc'; ?>
--FILE--
<?php
require __DIR__ . '/../config.inc';
$redis = TestRedis::start();
// In a child process, so that a hang is cut short by this test.
$code = '$t = microtime(true);
try {
    (new RedisLock("k", 5, "rediss://127.0.0.1:' . $redis->port . '", ["tls_verify" => false, "connect_timeout" => 0.5, "read_timeout" => 0.5]))->acquire();
    echo "acquired\n";
} catch (Throwable $e) {
    echo get_class($e), "\n";
}
printf("%.2f\n", microtime(true) - $t);';
$file = tempnam(sys_get_temp_dir(), 'redislock-tls-');
file_put_contents($file, "<?php\n" . $code);
$proc = proc_open([PHP_BINARY, '-n', '-d', 'extension=' . redislock_extension_path(), $file],
    [0 => ['file', '/dev/null', 'r'], 1 => ['pipe', 'w'], 2 => ['redirect', 1]], $pipes);
stream_set_blocking($pipes[1], false);
$out = '';
$deadline = microtime(true) + 2.5;
while (microtime(true) < $deadline && proc_get_status($proc)['running']) {
    $r = [$pipes[1]];
    $w = $e = null;
    if (stream_select($r, $w, $e, 0, 50000)) {
        $out .= (string) fread($pipes[1], 8192);
    }
}
$running = proc_get_status($proc)['running'];
if ($running) {
    proc_terminate($proc, SIGKILL);
}
$out .= (string) stream_get_contents($pipes[1]);
fclose($pipes[1]);
proc_close($proc);
unlink($file);
if ($running) {
    echo "hung (killed after 2.5 s)\n";
} else {
    [$class, $secs] = explode("\n", trim($out)) + [1 => '?'];
    echo $class, "\n";
    echo (float) $secs < 1.5 ? "in time\n" : "took $secs s\n";
}
?>
--EXPECT--
RedisLock\ConnectionException
in time

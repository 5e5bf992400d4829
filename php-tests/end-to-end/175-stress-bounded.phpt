--TEST--
stress (bounded): 8 processes x 60 critical sections on one key with auto_renew and a 2 s ttl, some sleeping 0-5 ms: scripts/stress-check.php finds no overlap and an exact counter
--EXTENSIONS--
redislock
--SKIPIF--
<?php require __DIR__ . '/../skipif.inc'; ?>
--FILE--
<?php
/*
 * The bounded version of scripts/stress.sh (16 x 500 by default): the same
 * worker (scripts/stress-worker.php) and checker (scripts/stress-check.php).
 */
require __DIR__ . '/../config.inc';

$procs = 8;
$sections = 60;
$scripts = dirname(__DIR__, 2) . '/scripts';
$url = redislock_test_url();
$key = redislock_test_key('stress');
$dir = sys_get_temp_dir() . '/redislock-stress-' . getmypid() . '-' . bin2hex(random_bytes(3));
mkdir($dir, 0700);
$counter = "$dir/counter";
file_put_contents($counter, '0');

$children = [];
$logs = [];
for ($i = 0; $i < $procs; $i++) {
    $logs[] = $log = "$dir/log.$i";
    $children[] = proc_open(
        [PHP_BINARY, '-n', '-d', 'extension=' . redislock_extension_path(), '-d', 'display_errors=stderr',
         "$scripts/stress-worker.php", $url, $key, (string) $sections, $log, $counter, '2', '5', '50'],
        [0 => ['file', '/dev/null', 'r'], 1 => ['file', "$dir/out.$i", 'w'], 2 => ['redirect', 1]],
        $pipes
    );
}
$deadline = microtime(true) + 60;
$codes = [];
foreach ($children as $i => $child) {
    while (($st = proc_get_status($child))['running'] && microtime(true) < $deadline) {
        usleep(10000);
    }
    if ($st['running']) {
        proc_terminate($child, 9);
        $codes[] = "worker $i hung (killed)";
    } elseif ($st['exitcode'] !== 0) {
        $codes[] = "worker $i exited {$st['exitcode']}: " . file_get_contents("$dir/out.$i");
    }
    proc_close($child);
}
echo "workers: ", $codes ? implode('; ', $codes) : 'all exited 0', "\n";

$check = proc_open(
    array_merge([PHP_BINARY, '-n', "$scripts/stress-check.php", $counter, (string) ($procs * $sections)], $logs),
    [0 => ['file', '/dev/null', 'r'], 1 => ['pipe', 'w'], 2 => ['redirect', 1]],
    $pipes
);
$report = stream_get_contents($pipes[1]);
fclose($pipes[1]);
echo $report;
echo 'checker exit: ', proc_close($check), "\n";
echo 'lock left: ', var_export(redis_cmd($url, 'EXISTS', $key), true), "\n";

foreach (glob("$dir/*") as $f) {
    unlink($f);
}
rmdir($dir);
?>
--EXPECTF--
workers: all exited 0
stress-check: 8 processes, 480 critical sections checked (480 expected), 0 overlaps, counter expected 480 actual 480, 0 errors; min gap %s, %f sections/s
stress-check: OK
checker exit: 0
lock left: 0

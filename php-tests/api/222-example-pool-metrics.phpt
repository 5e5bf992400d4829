--TEST--
examples/pool-metrics.php: 8 forked workers count into the pool; the parent, which took no lock, prints the pool's exposition (960 acquires), which promtool accepts
--EXTENSIONS--
redislock
pcntl
--SKIPIF--
<?php require __DIR__ . '/../skipif.inc'; redislock_skip_unless_single('runs the example on one server of its own');
if (trim((string) shell_exec('command -v promtool')) === '') die('skip promtool is not installed (apt-get install prometheus)'); ?>
--FILE--
<?php
require __DIR__ . '/../config.inc';
require __DIR__ . '/../children.inc';
$server = TestRedis::start();
$example = dirname(__DIR__, 2) . '/examples/pool-metrics.php';
$proc = proc_open([PHP_BINARY, '-n', '-d', 'extension=' . redislock_extension_path(), $example, $server->url()],
    [0 => ['file', '/dev/null', 'r'], 1 => ['pipe', 'w'], 2 => ['pipe', 'w']], $pipes);
$text = stream_get_contents($pipes[1]);
$said = stream_get_contents($pipes[2]);
$code = proc_close($proc);
check('the example ran', $code === 0, "exit $code: $said");
echo preg_replace('/\d+ contended\), lock p99 wait \d+ us/', 'N contended), lock p99 wait N us', trim($said)), "\n";
preg_match_all('/^redislock_acquires_total\{primitive="(\w+)",result="acquired"\} (\d+)$/m', $text, $m, PREG_SET_ORDER);
echo json_encode(array_column($m, 2, 1)), "\n";
$check = proc_open(['promtool', 'check', 'metrics'], [0 => ['pipe', 'r'], 1 => ['pipe', 'w'], 2 => ['redirect', 1]], $p);
fwrite($p[0], $text);
fclose($p[0]);
$lint = stream_get_contents($p[1]);
check('promtool check metrics accepts it', proc_close($check) === 0 && trim($lint) === '', $lint);
?>
--EXPECT--
the example ran: ok
pool: 960 acquires (N contended), lock p99 wait N us; this process: 0 acquires
{"lock":"480","read":"0","permit":"480"}
promtool check metrics accepts it: ok

--TEST--
RedisLock::metrics(): Prometheus text that promtool check metrics accepts, with the same figures as RedisLock::stats() (acquires by result, a cumulative wait histogram, escaped names)
--EXTENSIONS--
redislock
--SKIPIF--
<?php require __DIR__ . '/../skipif.inc'; redislock_skip_unless_single('counts on one server of its own');
if (trim((string) shell_exec('command -v promtool')) === '') die('skip promtool is not installed (apt-get install prometheus)'); ?>
--FILE--
<?php
require __DIR__ . '/../config.inc';
require __DIR__ . '/../children.inc';
$server = TestRedis::start();
$url = $server->url();
// A name that needs escaping, a semaphore, a read hold, a timeout.
$odd = redislock_test_key("quote\" back\\slash\nline é");
$a = new RedisLock($odd, 10, $url);
$b = new RedisLock($odd, 10, $url, ['reentrant' => false]);
$a->acquire();
$b->acquire(0.02);
$a->release();
$r = new RedisLock(redislock_test_key('metrics-read'), 10, $url);
$r->acquireRead();
$r->release();
$s = new RedisLock\Semaphore(redislock_test_key('metrics-sem'), 2, 10, $url);
$s->withPermit(fn () => null);

$text = RedisLock::metrics();
$stats = RedisLock::stats();
$proc = proc_open(['promtool', 'check', 'metrics'], [0 => ['pipe', 'r'], 1 => ['pipe', 'w'], 2 => ['redirect', 1]], $pipes);
fwrite($pipes[0], $text);
fclose($pipes[0]);
$said = stream_get_contents($pipes[1]);
$code = proc_close($proc);
check('promtool check metrics accepts it, no lint problem', $code === 0 && trim($said) === '', "exit $code: $said");

// Every sample, parsed back.
$samples = [];
foreach (explode("\n", trim($text)) as $line) {
    if ($line === '' || $line[0] === '#') {
        continue;
    }
    if (!preg_match('/^([a-z_]+)(\{.*\})? (\S+)$/', $line, $m)) {
        echo "unparsed: $line\n";
        continue;
    }
    $samples[$m[1] . ($m[2] ?? '')] = $m[3];
}
foreach (['lock', 'read', 'permit'] as $p) {
    $f = $stats['primitives'][$p];
    $acq = (int) $samples["redislock_acquires_total{primitive=\"$p\",result=\"acquired\"}"];
    $count = (int) $samples["redislock_wait_seconds_count{primitive=\"$p\"}"];
    $inf = (int) $samples["redislock_wait_seconds_bucket{primitive=\"$p\",le=\"+Inf\"}"];
    $buckets = [];
    foreach ($samples as $k => $v) {
        if (str_starts_with($k, "redislock_wait_seconds_bucket{primitive=\"$p\"")) {
            $buckets[] = (int) $v;
        }
    }
    $sorted = $buckets;
    sort($sorted);
    check("$p: acquired, histogram count and +Inf agree with stats()", $acq === $f['acquired'] && $count === $acq && $inf === $acq
        && $acq >= 1 && $buckets === $sorted && count($buckets) === 18, json_encode([$acq, $count, $inf, $f['acquired'], $buckets]));
}
check('a timeout is counted as such', (int) $samples['redislock_acquires_total{primitive="lock",result="timeout"}'] === $stats['primitives']['lock']['timeouts']
    && $stats['primitives']['lock']['timeouts'] >= 1);
$escaped = str_replace(["\\", '"', "\n"], ["\\\\", '\\"', '\\n'], $odd);
check('the contended name is a label, escaped', isset($samples["redislock_name_contended_total{primitive=\"lock\",name=\"$escaped\"}"]),
    implode("\n", preg_grep('/^redislock_name_contended/', explode("\n", $text))));
check('info names the version and scope', isset($samples['redislock_info{version="' . phpversion('redislock') . '",scope="pool"}']));
?>
--EXPECT--
promtool check metrics accepts it, no lint problem: ok
lock: acquired, histogram count and +Inf agree with stats(): ok
read: acquired, histogram count and +Inf agree with stats(): ok
permit: acquired, histogram count and +Inf agree with stats(): ok
a timeout is counted as such: ok
the contended name is a label, escaped: ok
info names the version and scope: ok

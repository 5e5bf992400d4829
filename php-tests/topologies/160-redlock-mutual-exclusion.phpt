--TEST--
redlock: 4 forked processes x 150 blocking acquires over 5 masters: a non-atomic counter is exact, no critical sections overlap, nothing is left on any master
--EXTENSIONS--
redislock
pcntl
--SKIPIF--
<?php require __DIR__ . '/../skipif.inc'; ?>
--FILE--
<?php
require __DIR__ . '/../config.inc';
require __DIR__ . '/../children.inc';
$servers = [];
for ($i = 0; $i < 5; $i++) {
    $servers[] = TestRedis::start();
}
$urls = array_map(fn (TestRedis $s) => $s->url(), $servers);
$key = redislock_test_key('redlock-exclusion');
$counter = "$key:counter";
$dir = sys_get_temp_dir() . '/redislock-redlock-' . getmypid();
@mkdir($dir);
$rounds = 150;

$pids = [];
for ($p = 0; $p < 4; $p++) {
    $pid = pcntl_fork();
    if ($pid === 0) {
        $intervals = [];
        $errors = 0;
        for ($i = 0; $i < $rounds; $i++) {
            $l = new RedisLock($key, 5, $urls, ['retry_delay' => 0.2]);
            try {
                if (!$l->acquire(10.0)) { $errors++; continue; }
                $start = hrtime(true);
                // Read-modify-write: an overlap would lose an increment.
                $n = (int) redis_cmd($urls[0], 'GET', $counter);
                redis_cmd($urls[0], 'SET', $counter, (string) ($n + 1));
                $intervals[] = [$start, hrtime(true)];
                if (!$l->release()) { $errors++; }
            } catch (Throwable $e) {
                fwrite(STDERR, get_class($e) . ': ' . $e->getMessage() . "\n");
                $errors++;
            }
        }
        file_put_contents("$dir/$p.json", json_encode(['errors' => $errors, 'intervals' => $intervals]));
        child_exit(0);
    }
    $pids[] = $pid;
}
foreach ($pids as $pid) {
    pcntl_waitpid($pid, $status);
}
$all = [];
$errors = 0;
for ($p = 0; $p < 4; $p++) {
    $r = json_decode((string) @file_get_contents("$dir/$p.json"), true);
    @unlink("$dir/$p.json");
    if (!is_array($r)) { echo "process $p wrote nothing\n"; continue; }
    $errors += $r['errors'];
    $all = array_merge($all, $r['intervals']);
}
@rmdir($dir);
usort($all, fn ($a, $b) => $a[0] <=> $b[0]);
$overlaps = 0;
for ($i = 1; $i < count($all); $i++) {
    if ($all[$i][0] < $all[$i - 1][1]) { $overlaps++; }
}
printf("critical sections: %d, errors: %d, overlaps: %d\n", count($all), $errors, $overlaps);
check('the counter is exact', (int) redis_cmd($urls[0], 'GET', $counter) === 4 * $rounds, redis_cmd($urls[0], 'GET', $counter));
$left = 0;
foreach ($urls as $url) {
    $left += count(redis_keys_left($url, "$key*")) - ($url === $urls[0] ? 1 : 0);
}
check('nothing left on any master', $left === 0, "$left keys");
?>
--EXPECT--
critical sections: 600, errors: 0, overlaps: 0
the counter is exact: ok
nothing left on any master: ok

--TEST--
cluster: 4 forked processes x 100 blocking acquires through different seed nodes: a non-atomic counter is exact, no critical sections overlap, nothing is left
--EXTENSIONS--
redislock
pcntl
--SKIPIF--
<?php require __DIR__ . '/../skipif.inc'; ?>
--FILE--
<?php
require __DIR__ . '/../cluster.inc';
require __DIR__ . '/../children.inc';
$nodes = test_redis_cluster(3);
$key = redislock_test_key('cluster-exclusion');
$name = "{{$key}}";
$master = test_cluster_master($nodes, $name)->url();
// In the lock's slot, so it lives on the lock's master.
$counter = "$name:counter";
$dir = sys_get_temp_dir() . '/redislock-cluster-' . getmypid();
@mkdir($dir);
$rounds = 100;

$pids = [];
for ($p = 0; $p < 4; $p++) {
    $seed = $nodes[$p % 3]->url();
    $pid = pcntl_fork();
    if ($pid === 0) {
        $intervals = [];
        $errors = 0;
        for ($i = 0; $i < $rounds; $i++) {
            $l = new RedisLock($key, 5, $seed, ['cluster' => true, 'retry_delay' => 0.2]);
            try {
                if (!$l->acquire(10.0)) { $errors++; continue; }
                $start = hrtime(true);
                $n = (int) redis_cmd($master, 'GET', $counter);
                redis_cmd($master, 'SET', $counter, (string) ($n + 1));
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
check('the counter is exact', (int) redis_cmd($master, 'GET', $counter) === 4 * $rounds, redis_cmd($master, 'GET', $counter));
$left = redis_keys_left($master, "$name*");
check('only the counter is left', $left === [$counter], json_encode($left));
?>
--EXPECT--
critical sections: 400, errors: 0, overlaps: 0
the counter is exact: ok
only the counter is left: ok

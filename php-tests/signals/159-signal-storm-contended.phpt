--TEST--
signals: 8 processes contend for one key for 20 s while each receives SIGUSR1 every millisecond: no failed call, no overlapping critical sections, no key left
--EXTENSIONS--
redislock
pcntl
--SKIPIF--
<?php require __DIR__ . '/../skipif.inc'; ?>
--FILE--
<?php
require __DIR__ . '/../config.inc';
require __DIR__ . '/../children.inc';
$url = redislock_test_url();
$key = redislock_test_key('storm-contended');
$seconds = 20;
$dir = sys_get_temp_dir() . '/redislock-storm-' . getmypid();
@mkdir($dir);

$workers = [];
for ($i = 0; $i < 8; $i++) {
    $workers[] = spawn_php(sprintf('
        pcntl_async_signals(true);
        $signals = 0;
        pcntl_signal(SIGUSR1, function () use (&$signals) { $signals++; });
        [$key, $url, $seconds, $file] = [%s, %s, %d, %s];
        $intervals = [];
        $errors = [];
        echo "ready\n";
        // One second longer than the storm: a signal after the script ends
        // (its handler gone) would kill the worker.
        $end = hrtime(true) + ($seconds + 1) * 1e9;
        while (hrtime(true) < $end) {
            try {
                $l = new RedisLock($key, 5, $url);
                if (!$l->acquire(5.0)) { $errors[] = "not acquired within 5 s"; continue; }
                $start = hrtime(true);
                usleep(200);
                $intervals[] = [$start, hrtime(true)];
                if (!$l->release()) { $errors[] = "not released"; }
                unset($l);
            } catch (Throwable $e) {
                $errors[] = get_class($e) . ": " . $e->getMessage();
            }
        }
        file_put_contents($file, json_encode($intervals));
        echo json_encode(["sections" => count($intervals), "errors" => count($errors), "signals" => $signals, "first" => array_slice(array_unique($errors), 0, 3)]), "\n";',
        var_export($key, true), var_export($url, true), $seconds, var_export("$dir/$i.json", true)));
}
foreach ($workers as $i => $w) {
    if (read_line($w) !== 'ready') {
        echo "worker $i did not start\n";
    }
}
$end = hrtime(true) + $seconds * 1e9;
while (hrtime(true) < $end) {
    foreach ($workers as $w) {
        proc_terminate($w[0], SIGUSR1);
    }
    usleep(1000);
}
$sections = $errors = $signals = 0;
$all = [];
foreach ($workers as $i => $w) {
    [$code, $out] = finish_php($w, 15);
    $r = json_decode($out, true);
    if ($code !== 0 || !is_array($r)) {
        echo "worker $i: $code: $out\n";
        continue;
    }
    $sections += $r['sections'];
    $errors += $r['errors'];
    $signals += $r['signals'];
    if ($r['errors']) {
        echo "worker $i: ", json_encode($r['first']), "\n";
    }
    $all = array_merge($all, json_decode((string) file_get_contents("$dir/$i.json"), true) ?: []);
    @unlink("$dir/$i.json");
}
@rmdir($dir);
usort($all, fn ($a, $b) => $a[0] <=> $b[0]);
$overlaps = 0;
for ($i = 1; $i < count($all); $i++) {
    if ($all[$i][0] < $all[$i - 1][1]) {
        $overlaps++;
    }
}
printf("storm: %d critical sections, %d signals received, %d failed calls, %d overlaps\n", $sections, $signals, $errors, $overlaps);
check('many critical sections under many signals', $sections > 1000 && $signals > 8 * $seconds * 200, "$sections sections, $signals signals");
check('no failed call', $errors === 0, "$errors");
check('no overlapping critical sections', $overlaps === 0 && count($all) === $sections, "$overlaps overlaps");
var_dump(redis_cmd($url, 'EXISTS', $key, $key . '~~q') + count(redis_keys_left($url, $key . '~~*')));
?>
--EXPECTF--
storm: %d critical sections, %d signals received, 0 failed calls, 0 overlaps
many critical sections under many signals: ok
no failed call: ok
no overlapping critical sections: ok
int(0)

<?php
/*
 * Checks the logs of scripts/stress-worker.php: every critical section
 * ("pid start end", hrtime ns) of every process, sorted by start, must end
 * before the next one starts; the shared counter must equal the number of
 * sections; no process may report an error ("ERR ...").
 *
 *   php scripts/stress-check.php COUNTER EXPECTED_SECTIONS LOG...
 *
 * Prints one summary line (and the first overlaps and errors) and exits 1
 * on any violation, 0 otherwise.
 */

if ($argc < 4) {
    fwrite(STDERR, "usage: stress-check.php COUNTER EXPECTED_SECTIONS LOG...\n");
    exit(2);
}
$counterFile = $argv[1];
$expected = (int) $argv[2];
$logs = array_slice($argv, 3);

$intervals = [];
$errors = [];
$pids = [];
foreach ($logs as $log) {
    $text = @file_get_contents($log);
    if ($text === false) {
        $errors[] = "cannot read log $log";
        continue;
    }
    foreach (explode("\n", $text) as $line) {
        if ($line === '') {
            continue;
        }
        if (str_starts_with($line, 'ERR ')) {
            $errors[] = substr($line, 4);
            continue;
        }
        $f = explode(' ', $line);
        if (count($f) !== 3 || !preg_match('/^\d+ \d+ \d+$/', $line) || (int) $f[2] < (int) $f[1]) {
            $errors[] = "malformed log line in $log: $line";
            continue;
        }
        $intervals[] = [(int) $f[1], (int) $f[2], (int) $f[0]];
        $pids[$f[0]] = true;
    }
}

usort($intervals, fn ($a, $b) => $a[0] <=> $b[0] ?: $a[1] <=> $b[1]);
$overlaps = [];
$latest = null;   // the interval that ends last among those seen so far
$minGap = null;
foreach ($intervals as $iv) {
    if ($latest !== null) {
        if ($iv[0] <= $latest[1]) {
            $overlaps[] = sprintf('pid %d [%d, %d] overlaps pid %d [%d, %d] by %.1f us',
                $iv[2], $iv[0], $iv[1], $latest[2], $latest[0], $latest[1], ($latest[1] - $iv[0]) / 1e3);
        } else {
            $gap = $iv[0] - $latest[1];
            $minGap = $minGap === null ? $gap : min($minGap, $gap);
        }
    }
    if ($latest === null || $iv[1] > $latest[1]) {
        $latest = $iv;
    }
}

$actual = (int) @file_get_contents($counterFile);
$checked = count($intervals);
$span = $checked > 0 ? ($latest[1] - $intervals[0][0]) / 1e9 : 0.0;
printf(
    "stress-check: %d processes, %d critical sections checked (%d expected), %d overlaps, counter expected %d actual %d, %d errors; min gap %s, %.1f sections/s\n",
    count($pids), $checked, $expected, count($overlaps), $checked, $actual, count($errors),
    $minGap === null ? '-' : sprintf('%.1f us', $minGap / 1e3),
    $span > 0 ? $checked / $span : 0.0
);
foreach (array_slice($overlaps, 0, 10) as $o) {
    echo "  OVERLAP $o\n";
}
foreach (array_slice($errors, 0, 10) as $e) {
    echo "  ERROR $e\n";
}
$ok = !$overlaps && !$errors && $checked === $expected && $actual === $checked;
echo $ok ? "stress-check: OK\n" : "stress-check: FAILED\n";
exit($ok ? 0 : 1);

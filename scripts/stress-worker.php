<?php
/*
 * One process of the stress checker (scripts/stress.sh,
 * php-tests/end-to-end/175-stress-bounded.phpt): runs SECTIONS critical sections on one
 * key, each taken with acquire(wait) on a RedisLock with auto_renew and a
 * short ttl, some of them sleeping 0-5 ms. Inside each it increments a
 * shared counter file without any other protection (read, maybe sleep,
 * write): only the lock keeps increments from being lost.
 *
 * Every section is logged as "pid start end" (hrtime(true) ns, taken right
 * after acquire() returned and right before release()), one line each, to
 * LOG; anything that went wrong is logged as "ERR pid message".
 * scripts/stress-check.php reads the logs of all processes.
 *
 *   php -n -d extension=redislock.so scripts/stress-worker.php \
 *       URL KEY SECTIONS LOG COUNTER [TTL=2] [MAX_SLEEP_MS=5] [SLEEP_PERCENT=50]
 */

if ($argc < 6) {
    fwrite(STDERR, "usage: stress-worker.php URL KEY SECTIONS LOG COUNTER [TTL] [MAX_SLEEP_MS] [SLEEP_PERCENT]\n");
    exit(2);
}
[, $url, $key, $sections, $logFile, $counterFile] = $argv;
$sections = (int) $sections;
$ttl = (float) ($argv[6] ?? 2.0);
$maxSleepUs = (int) (1000 * (float) ($argv[7] ?? 5));
$sleepPercent = (int) ($argv[8] ?? 50);
$pid = getmypid();
mt_srand($pid ^ (int) hrtime(true));

$lines = [];
$errors = 0;
$lock = new RedisLock($key, ttl: $ttl, servers: $url, options: ['auto_renew' => true]);
for ($i = 0; $i < $sections; $i++) {
    try {
        if (!$lock->acquire(wait: 60.0)) {
            $lines[] = "ERR $pid section $i: acquire(wait: 60) timed out";
            $errors++;
            continue;
        }
    } catch (Throwable $e) {
        $lines[] = "ERR $pid section $i: acquire threw " . get_class($e) . ': ' . $e->getMessage();
        $errors++;
        continue;
    }
    $start = hrtime(true);
    // The shared, non-atomic counter: lost updates show any overlap.
    $value = (int) file_get_contents($counterFile);
    if (mt_rand(1, 100) <= $sleepPercent) {
        usleep(mt_rand(0, $maxSleepUs));
    }
    file_put_contents($counterFile, (string) ($value + 1));
    $held = $lock->isAcquired();
    $end = hrtime(true);
    $lines[] = "$pid $start $end";
    try {
        $released = $lock->release();
    } catch (Throwable $e) {
        $released = false;
        $lines[] = "ERR $pid section $i: release threw " . get_class($e) . ': ' . $e->getMessage();
        $errors++;
    }
    if (!$held || !$released) {
        // The lease was lost while the section ran: not a mutual
        // exclusion any more, whatever the intervals say.
        $lines[] = "ERR $pid section $i: lease lost (isAcquired " . var_export($held, true)
            . ', release ' . var_export($released, true) . ')';
        $errors++;
    }
}
file_put_contents($logFile, implode("\n", $lines) . "\n", FILE_APPEND);
exit($errors > 0 ? 1 : 0);

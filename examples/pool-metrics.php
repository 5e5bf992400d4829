<?php
/*
 * Pool-wide statistics without a web server: this process forks 8 workers,
 * as a PHP-FPM master does, and they contend for two locks and a semaphore.
 * Every worker counts into the pool's shared counters (redislock.stats =
 * pool, the default), so the parent, which took no lock, prints the whole
 * pool's figures in Prometheus's text format.
 *
 *   php -d extension=target/release/redislock.so examples/pool-metrics.php [redis://127.0.0.1:6379] > metrics.txt
 *   php -d extension=target/release/redislock.so bridge/bin/redislock metrics --file=metrics.txt --svg=waits.svg
 *
 * The second command draws the pool's wait-time histograms (one chart per
 * primitive) as an SVG to open in a browser (docs/observability.md).
 */

if (!extension_loaded('redislock') || !function_exists('pcntl_fork')) {
    fwrite(STDERR, "needs the extension and pcntl: php -d extension=/path/to/redislock.so examples/pool-metrics.php\n");
    exit(1);
}

$server = $argv[1] ?? (getenv('REDISLOCK_SERVER') ?: 'redis://127.0.0.1:6379');
$prefix = 'pool-metrics-' . getmypid() . ':';
$children = [];
for ($w = 0; $w < 8; $w++) {
    $pid = pcntl_fork();
    if ($pid === 0) {
        mt_srand($w);
        for ($i = 0; $i < 60; $i++) {
            $name = $i % 3 === 0 ? 'report' : 'invoice';
            (new RedisLock($prefix . $name, 10, $server))->withLock(fn () => usleep(mt_rand(200, 2000)), 10);
            (new RedisLock\Semaphore($prefix . 'imports', 3, 10, $server))->withPermit(fn () => usleep(1000), 10);
        }
        exit(0);
    }
    $children[] = $pid;
}
foreach ($children as $pid) {
    pcntl_waitpid($pid, $status);
}
$s = RedisLock::stats();
fprintf(STDERR, "pool: %d acquires (%d contended), lock p99 wait %d us; this process: %d acquires\n",
    $s['acquires'], $s['contended'], $s['primitives']['lock']['wait_p99_us'], RedisLock::stats('process')['acquires']);
echo RedisLock::metrics();

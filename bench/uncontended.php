<?php

declare(strict_types=1);

/*
 * One uncontended run: this process alone does N acquire+release cycles of
 * one contender on one fresh key, and prints one JSON object.
 *
 *   php -d extension=.../redislock.so bench/uncontended.php --contender=redislock --port=6379 [--seconds=1.5 --warmup=0.3]
 *   ... --topology=redlock:127.0.0.1:P1,127.0.0.1:P2,... instead of --port: the topology suite (bench/topologies.php)
 *
 * The warm-up (connect, script load, JIT-free PHP caches) also calibrates
 * N so that the measured loop lasts about --seconds.
 */

require __DIR__ . '/lib/bootstrap.php';

$opt = cli_options(['contender' => null, 'port' => '', 'topology' => '', 'seconds' => '1.5', 'warmup' => '0.3', 'rep' => '1']);
$name = $opt['contender'];
$redis = bench_target($opt);
$contender = target_contender($name, $redis);
$key = fresh_key('uncontended', $name);

$cycle = function () use ($contender, $key): void {
    if (!$contender->tryAcquire($key)) {
        throw new RuntimeException('acquire of a free lock failed');
    }
    if (!$contender->release()) {
        throw new RuntimeException('release of our own lock failed');
    }
};

// Warm-up and calibration.
$done = 0;
$start = hrtime(true);
$warmNs = (int) ((float) $opt['warmup'] * 1e9);
do {
    $cycle();
    $done++;
} while (hrtime(true) - $start < $warmNs);
$rate = $done / ((hrtime(true) - $start) / 1e9);
$cycles = max(200, (int) round($rate * (float) $opt['seconds']));

$stats = target_stats($redis);
$s0 = $stats->snapshot();
$s1 = $stats->snapshot();
$ru0 = getrusage();
$t0 = hrtime(true);
for ($i = 0; $i < $cycles; $i++) {
    if (!$contender->tryAcquire($key)) {
        throw new RuntimeException("cycle $i: acquire of a free lock failed");
    }
    if (!$contender->release()) {
        throw new RuntimeException("cycle $i: release of our own lock failed");
    }
}
$t1 = hrtime(true);
$cpuUs = cpu_us_since($ru0);
$s2 = $stats->snapshot();

$elapsed = ($t1 - $t0) / 1e9;
$redisWork = RedisStats::perUnit(RedisStats::work($s0, $s1, $s2), $cycles);

echo json_encode([
    'suite' => 'uncontended',
    'contender' => $name,
    'rep' => (int) $opt['rep'],
    'cycles' => $cycles,
    'seconds' => round($elapsed, 4),
    'cycles_per_s' => round($cycles / $elapsed, 1),
    'us_per_cycle' => round($elapsed * 1e6 / $cycles, 3),
    'cpu_us_per_cycle' => round($cpuUs / $cycles, 3),
    'rt_per_cycle' => $redisWork['rt'],
    'cmds_per_cycle' => $redisWork['cmds'],
    'redis_cpu_us_per_cycle' => $redisWork['cpu_us'],
    'calls_per_cycle' => $redisWork['calls'],
]), "\n";

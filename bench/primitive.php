<?php

declare(strict_types=1);

/*
 * One measured run of the primitives suite: --procs forked processes each
 * run --sections sections on ONE fresh name, waiting with the contender's
 * own mechanism. Prints one JSON object.
 *
 *   php -d extension=.../redislock.so bench/primitive.php --workload=semaphore --contender=redislock --port=6379
 *       [--procs=16 --sections=60 --permits=4 --hold-us=500 --outside-us=1000 --wait=10 --rep=1]
 *   ... --workload=rw [--procs=8 --write-pct=10 --seed=1]
 *
 * Sections (bench/lib/Occupancy.php): on entry and exit every section
 * updates a shared occupancy file under flock(2) (holders, writers), so the
 * concurrency inside is counted exactly whatever the lock under test does.
 * - semaphore: each section holds one of --permits permits for
 *   usleep(--hold-us); the most holders seen inside must not exceed N.
 * - rw: each section is a read or a write, chosen in advance by a seeded
 *   RNG (--write-pct writes, --seed: the same sequence for every contender);
 *   a read reads a counter and sleeps --hold-us, a write increments it
 *   around usleep(--hold-us) without any other protection (a lost update
 *   shows two writers inside). A write that meets any other section, or a
 *   read that meets a write, is a violation.
 * Every section logs (pid, t_call, t_enter, t_exit, kind) with hrtime(true);
 * the merged log gives the waits, the throughput and a second,
 * independent count of the concurrency (bench/lib/Occupancy.php). After
 * each section, --outside-us of other work (usleep).
 *
 * Start barrier, INFO snapshots and the children's lifetime as in
 * bench/contended.php. A contender that cannot run here (primitive_skip_reason)
 * prints {"skipped": why} and exits 0.
 */

require __DIR__ . '/lib/bootstrap.php';

$opt = cli_options([
    'workload' => null, 'contender' => null, 'port' => null, 'procs' => '16', 'sections' => '60', 'permits' => '4',
    'hold-us' => '500', 'outside-us' => '1000', 'write-pct' => '10', 'seed' => '1', 'wait' => '10', 'rep' => '1',
]);
$workload = $opt['workload'];
$name = $opt['contender'];
if (!in_array($workload, PRIMITIVE_WORKLOADS, true)) {
    fwrite(STDERR, "primitive.php: --workload must be one of " . implode(', ', PRIMITIVE_WORKLOADS) . "\n");
    exit(2);
}
$redis = new Endpoint('127.0.0.1', (int) $opt['port']);
$procs = (int) $opt['procs'];
$sections = (int) $opt['sections'];
$permits = (int) $opt['permits'];
$holdUs = (int) $opt['hold-us'];
$outsideUs = (int) $opt['outside-us'];
$writePct = (float) $opt['write-pct'];
$wait = (float) $opt['wait'];
$base = ['suite' => 'primitives', 'workload' => $workload, 'contender' => $name, 'rep' => (int) $opt['rep']];

$skip = primitive_skip_reason($name, $workload);
if ($skip !== null) {
    echo json_encode($base + ['skipped' => $skip]), "\n";
    exit(0);
}

// The kinds of every section of every process, drawn once from the seed,
// so every contender runs the same sequence.
$kinds = [];
$rng = new Random\Randomizer(new Random\Engine\Mt19937((int) $opt['seed']));
for ($c = 0; $c < $procs; $c++) {
    for ($i = 0; $i < $sections; $i++) {
        $kinds[$c][$i] = $workload === 'semaphore' ? OccupancyFile::PERMIT
            : ($rng->getInt(0, 9999) < $writePct * 100 ? OccupancyFile::WRITE : OccupancyFile::READ);
    }
}
$key = fresh_key("primitives-$workload", $name);
$occupancyPath = OccupancyFile::create();
$resultDir = sys_get_temp_dir() . '/bench-primitive-' . getmypid() . '-' . bin2hex(random_bytes(4));
mkdir($resultDir);

/** Child body: warm up, wait for the start time, run the sections, hand in the log. */
function child(string $name, string $workload, Endpoint $redis, string $key, array $kinds, int $permits, int $holdUs,
               int $outsideUs, float $wait, string $occupancyPath, string $resultFile, $sock): void
{
    $contender = make_primitive_contender($name, $redis, $workload);
    $warmKey = "$key:warm:" . getmypid();
    $nothing = function (): void {
    };
    for ($i = 0; $i < 3; $i++) {
        $workload === 'semaphore'
            ? $contender->withPermit($warmKey, $permits, 1.0, $nothing)
            : ($contender->withRead($warmKey, 1.0, $nothing) && $contender->withWrite($warmKey, 1.0, $nothing));
    }
    $contender->releaseFailures = 0;
    $occupancy = new OccupancyFile($occupancyPath);

    Children::awaitStart($sock);

    $pid = getmypid();
    $log = [];
    $timeouts = 0;
    $ru0 = getrusage();
    foreach ($kinds as $kind) {
        $tEnter = $tExit = 0;
        $section = function () use ($occupancy, $kind, $holdUs, &$tEnter, &$tExit): void {
            $tEnter = hrtime(true);
            $occupancy->enter($kind);
            match ($kind) {
                OccupancyFile::WRITE => $occupancy->writeCounter($holdUs),
                OccupancyFile::READ => $occupancy->readCounter($holdUs),
                default => usleep($holdUs),
            };
            $occupancy->leave($kind);
            $tExit = hrtime(true);
        };
        $tCall = hrtime(true);
        while (!match ($kind) {
            OccupancyFile::WRITE => $contender->withWrite($key, $wait, $section),
            OccupancyFile::READ => $contender->withRead($key, $wait, $section),
            default => $contender->withPermit($key, $permits, $wait, $section),
        }) {
            if (++$timeouts > 3) {
                break 2; // give up; the report counts the missing sections
            }
        }
        $log[] = [$pid, $tCall, $tEnter, $tExit, $kind];
        if ($outsideUs > 0) {
            usleep($outsideUs);
        }
    }
    $tEnd = hrtime(true);
    $cpuUs = cpu_us_since($ru0);
    file_put_contents($resultFile, json_encode([
        'log' => $log, 'timeouts' => $timeouts, 'release_failures' => $contender->releaseFailures,
        'max_holders' => $occupancy->maxHolders, 'rw_violations' => $occupancy->rwViolations,
        't_end' => $tEnd, 'cpu_us' => $cpuUs,
    ]));
    Children::finish($sock);
}

// Fork first; nothing Redis-related exists in the parent before this point.
$children = Children::fork($procs, $resultDir, 240, "primitive ($workload, $name)",
    fn (int $c, string $resultFile, $sock) => child($name, $workload, $redis, $key, $kinds[$c], $permits, $holdUs, $outsideUs, $wait, $occupancyPath, $resultFile, $sock));
[$startAt, $s0, $s1, $s2] = $children->run(new RedisStats($redis));

$records = [];
$timeouts = $releaseFailures = $maxHolders = $rwViolations = 0;
$tEnd = $startAt;
$tFirstEnd = PHP_INT_MAX;
$cpuUs = 0.0;
foreach ($children->list as $child) {
    $r = json_decode(file_get_contents($child['file']), true, flags: JSON_THROW_ON_ERROR);
    array_push($records, ...$r['log']);
    $timeouts += $r['timeouts'];
    $releaseFailures += $r['release_failures'];
    $maxHolders = max($maxHolders, $r['max_holders']);
    $rwViolations += $r['rw_violations'];
    $tEnd = max($tEnd, $r['t_end']);
    $tFirstEnd = min($tFirstEnd, $r['t_end']);
    $cpuUs += $r['cpu_us'];
    unlink($child['file']);
}
rmdir($resultDir);
$writesDone = OccupancyFile::counter($occupancyPath);
unlink($occupancyPath);

$n = count($records);
$span = ($tEnd - $startAt) / 1e9;
$log = OccupancyLog::analyze($records);
$redisWork = RedisStats::perUnit(RedisStats::work($s0, $s1, $s2), max(1, $n));
$waitsOf = function (?int $kind) use ($records): array {
    $w = [];
    foreach ($records as [, $call, $enter, , $k]) {
        if ($kind === null || $k === $kind) {
            $w[] = $enter - $call;
        }
    }
    sort($w);
    return $w;
};
$ms = fn (?float $ns) => $ns === null ? null : round($ns / 1e6, 3);
$waitStats = function (string $prefix, array $w) use ($ms): array {
    return [
        "{$prefix}_p50_ms" => $ms(Stats::percentile($w, 50)),
        "{$prefix}_p99_ms" => $ms(Stats::percentile($w, 99)),
        "{$prefix}_max_ms" => $ms($w ? (float) end($w) : null),
    ];
};
$waits = $waitsOf(null);
$writes = count(array_filter($records, fn ($r) => $r[4] === OccupancyFile::WRITE));
$out = $base + [
    'procs' => $procs,
    'sections' => $sections,
    'permits' => $workload === 'semaphore' ? $permits : null,
    'hold_us' => $holdUs,
    'outside_us' => $outsideUs,
    'done' => $n,
    'expected' => $procs * $sections,
    'seconds' => round($span, 4),
    'sections_per_s' => round($n / $span, 1),
    // Fairness: when the first process was done, in % of the run. Waiters served
    // in order all finish near the end; a lock that lets the releaser take it
    // again lets a few processes finish early while the others wait.
    'first_done_pct' => $span > 0 ? round(($tFirstEnd - $startAt) / ($tEnd - $startAt) * 100, 1) : null,
] + $waitStats('wait', $waits) + [
    'max_holders' => $maxHolders,            // flock counter: permits held at once, or readers at once
    'max_holders_log' => $workload === 'semaphore' ? $log['max_holders'] : $log['max_readers'],
    'rt_per_section' => $redisWork['rt'],
    'cmds_per_section' => $redisWork['cmds'],
    'calls_per_section' => $redisWork['calls'],
    'cpu_us_per_section' => round($cpuUs / max(1, $n), 1),
    'redis_cpu_us_per_section' => $redisWork['cpu_us'],
    'timeouts' => $timeouts,
    'release_failures' => $releaseFailures,
];
if ($workload === 'rw') {
    $out += $waitStats('read_wait', $waitsOf(OccupancyFile::READ)) + $waitStats('write_wait', $waitsOf(OccupancyFile::WRITE)) + [
        'reads' => $n - $writes,
        'writes' => $writes,
        'rw_violations' => $rwViolations,    // flock counter: entries that met a writer (or a write that met anyone)
        'write_overlaps_log' => $log['write_overlaps'],
        'write_counter' => $writesDone,      // must equal writes: else two writers were inside at once
    ];
}
$out['waits_us'] = array_map(fn ($w) => round($w / 1e3, 1), $waits);
echo json_encode($out), "\n";

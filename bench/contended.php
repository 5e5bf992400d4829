<?php

declare(strict_types=1);

/*
 * One contended run: --procs forked processes each run --sections critical
 * sections on ONE fresh key, blocking with the contender's own mechanism.
 * Prints one JSON object.
 *
 *   php -d extension=.../redislock.so bench/contended.php --contender=redislock --port=6379 [--procs=8 --sections=200 --outside-us=1000]
 *   ... --topology=redlock:127.0.0.1:P1,127.0.0.1:P2,... instead of --port: the topology suite (bench/topologies.php)
 *
 * Critical section: read a shared counter from a file, usleep(200), write
 * counter+1 (a lost update shows that two processes were inside at once),
 * and log (pid, t_call, t_enter, t_exit) with hrtime(true). After the
 * release, --outside-us of "other work" (usleep).
 *
 * Fairness of the start: children fork, connect and warm up, then report
 * "ready" on a socket pair; the parent takes its INFO snapshots and sends
 * all of them the same start time (hrtime, CLOCK_MONOTONIC); each child
 * sleeps until then. Children stay alive (idle, connected) until the
 * parent's last snapshot, so connection set-up and teardown never count.
 */

require __DIR__ . '/lib/bootstrap.php';

$opt = cli_options([
    'contender' => null, 'port' => '', 'topology' => '', 'procs' => '8', 'sections' => '200',
    'outside-us' => '0', 'wait' => '10', 'rep' => '1',
]);
$name = $opt['contender'];
$redis = bench_target($opt);
$procs = (int) $opt['procs'];
$sections = (int) $opt['sections'];
$outsideUs = (int) $opt['outside-us'];
$wait = (float) $opt['wait'];
$key = fresh_key('contended', $name);

// The shared counter: a 12-digit number at offset 0 of a file, read and
// written with unbuffered plain-file streams (lseek + read / lseek + write,
// a few microseconds, no Redis traffic).
$counterFile = tempnam(sys_get_temp_dir(), 'bench-counter-');
file_put_contents($counterFile, sprintf('%012d', 0));
$resultDir = sys_get_temp_dir() . '/bench-contended-' . getmypid() . '-' . bin2hex(random_bytes(4));
mkdir($resultDir);

/** Child body: warm up, wait for the start time, run the critical sections, hand in the log. */
function child(string $name, Endpoint|Topology $redis, string $key, int $sections, int $outsideUs, float $wait,
               string $counterFile, string $resultFile, $sock): void
{
    $contender = target_contender($name, $redis);
    $warmKey = "$key:warm:" . getmypid();
    for ($i = 0; $i < 3; $i++) {
        if ($contender->tryAcquire($warmKey)) {
            $contender->release();
        }
    }
    $counter = fopen($counterFile, 'r+');
    stream_set_read_buffer($counter, 0);
    stream_set_write_buffer($counter, 0);

    Children::awaitStart($sock);

    $pid = getmypid();
    $log = [];
    $timeouts = 0;
    $releaseFailures = 0;
    $ru0 = getrusage();
    for ($i = 0; $i < $sections; $i++) {
        $tCall = hrtime(true);
        while (!$contender->acquireBlocking($key, $wait)) {
            if (++$timeouts > 3) {
                break 2; // give up; the counter check reports the missing sections
            }
        }
        $tEnter = hrtime(true);
        fseek($counter, 0);
        $value = (int) fread($counter, 12);
        usleep(200);
        fseek($counter, 0);
        fwrite($counter, sprintf('%012d', $value + 1));
        $tExit = hrtime(true);
        if (!$contender->release()) {
            $releaseFailures++;
        }
        $log[] = [$pid, $tCall, $tEnter, $tExit];
        if ($outsideUs > 0) {
            usleep($outsideUs);
        }
    }
    $tEnd = hrtime(true);
    $cpuUs = cpu_us_since($ru0);
    file_put_contents($resultFile, json_encode([
        'log' => $log, 'timeouts' => $timeouts, 'release_failures' => $releaseFailures,
        't_end' => $tEnd, 'cpu_us' => $cpuUs,
    ]));
    Children::finish($sock);
}

// Fork first; nothing Redis-related exists in the parent before this point,
// so no child inherits a connection.
$children = Children::fork($procs, $resultDir, 120, "contended ($name)",
    fn (int $c, string $resultFile, $sock) => child($name, $redis, $key, $sections, $outsideUs, $wait, $counterFile, $resultFile, $sock));
[$startAt, $s0, $s1, $s2] = $children->run(target_stats($redis));

$records = [];
$timeouts = $releaseFailures = 0;
$tEnd = $startAt;
$cpuUs = 0.0;
foreach ($children->list as $child) {
    $r = json_decode(file_get_contents($child['file']), true, flags: JSON_THROW_ON_ERROR);
    array_push($records, ...$r['log']);
    $timeouts += $r['timeouts'];
    $releaseFailures += $r['release_failures'];
    $tEnd = max($tEnd, $r['t_end']);
    $cpuUs += $r['cpu_us'];
    unlink($child['file']);
}
rmdir($resultDir);
$counter = (int) file_get_contents($counterFile);
unlink($counterFile);

$a = Intervals::analyze($records);
$n = max(1, $a['sections']);
$span = ($tEnd - $startAt) / 1e9;
$redisWork = RedisStats::perUnit(RedisStats::work($s0, $s1, $s2), $n);
$us = fn (?float $ns) => $ns === null ? null : round($ns / 1e3, 1);
$ms = fn (?float $ns) => $ns === null ? null : round($ns / 1e6, 3);

echo json_encode([
    'suite' => 'contended',
    'contender' => $name,
    'rep' => (int) $opt['rep'],
    'procs' => $procs,
    'sections' => $sections,
    'outside_us' => $outsideUs,
    'done' => $a['sections'],
    'seconds' => round($span, 4),
    'cs_per_s' => round($a['sections'] / $span, 1),
    'handoffs' => count($a['handoffs']),
    'handoff_p50_us' => $us(Stats::percentile($a['handoffs'], 50)),
    'handoff_p99_us' => $us(Stats::percentile($a['handoffs'], 99)),
    'same_holder_pct' => $a['handoffs'] ? round($a['same_holder'] / count($a['handoffs']) * 100, 1) : null,
    'wait_p50_ms' => $ms(Stats::percentile($a['waits'], 50)),
    'wait_p99_ms' => $ms(Stats::percentile($a['waits'], 99)),
    'wait_max_ms' => $ms($a['waits'] ? (float) end($a['waits']) : null),
    'rt_per_cs' => $redisWork['rt'],
    'cmds_per_cs' => $redisWork['cmds'],
    'calls_per_cs' => $redisWork['calls'],
    'cpu_us_per_cs' => round($cpuUs / $n, 1),
    'redis_cpu_us_per_cs' => $redisWork['cpu_us'],
    'timeouts' => $timeouts,
    'release_failures' => $releaseFailures,
    'counter' => $counter,
    'expected' => $procs * $sections,
    'overlaps' => $a['overlaps'],
    'waits_us' => array_map(fn ($w) => round($w / 1e3, 1), $a['waits']),
]), "\n";

<?php

declare(strict_types=1);

/*
 * The topology suite: the same uncontended and contended measurements as
 * the main suites (bench/uncontended.php, bench/contended.php, each in a
 * fresh process), but on servers this script starts for itself:
 *
 *   - 5 independent masters M1..M5: "1 server" is M1, Redlock-3 is M1..M3,
 *     Redlock-5 is M1..M5;
 *   - a Redis Cluster of 3 masters, no replicas (reached through one seed).
 *
 * Uncontended: redislock on each topology, Symfony's CombinedStore
 * (ConsensusStrategy, one RedisStore per master) on Redlock-5. Contended:
 * --procs processes x --sections sections on one key over Redlock-5, 0 and
 * 1 ms outside the lock. Raw results go to <raw>/topology-*.jsonl and
 * <raw>/topology-meta.json; bench/report.php renders them.
 *
 *   php bench/topologies.php --so=... --raw=... [--reps=3 --quick=0 --procs=8 --sections= --seconds= --only=
 *                            --server-cpu=0 --pinning=label --pidfile=path]
 *
 * --server-cpu: pin every server to this CPU (taskset -c); empty: no pinning.
 * The PHP processes are pinned (or not) by whoever starts this script.
 * Every server is stopped by pid when this script ends, also on an error or
 * SIGINT/SIGTERM/SIGHUP; --pidfile lists the live ones for bench.sh's trap.
 */

require __DIR__ . '/lib/bootstrap.php';
require __DIR__ . '/lib/Runner.php';
require __DIR__ . '/lib/Results.php';
require __DIR__ . '/lib/Servers.php';

$opt = cli_options([
    'so' => null, 'raw' => null, 'reps' => '3', 'quick' => '0', 'procs' => '8', 'sections' => '',
    'seconds' => '', 'only' => '', 'server-cpu' => '', 'pinning' => 'none', 'pidfile' => '',
]);
$quick = $opt['quick'] === '1';
$reps = max(1, (int) $opt['reps']);
$procs = max(2, (int) $opt['procs']);
$seconds = $opt['seconds'] !== '' ? (float) $opt['seconds'] : ($quick ? 0.3 : 1.5);
$warmup = $quick ? 0.1 : 0.3;
$sections = $opt['sections'] !== '' ? (int) $opt['sections'] : ($quick ? 40 : 200);
$outsideVariants = [0, 1000];
$raw = $opt['raw'];
$only = $opt['only'] === '' ? null : array_map('trim', explode(',', $opt['only']));
$say = fn (string $line) => fwrite(STDERR, $line . "\n");
@mkdir($raw, 0777, true);
foreach (glob("$raw/topology-*") ?: [] as $old) {
    unlink($old);
}

$servers = new Servers($opt['server-cpu'] === '' ? [] : ['taskset', '-c', $opt['server-cpu']],
    $opt['pidfile'] === '' ? null : $opt['pidfile']);
register_shutdown_function(fn () => $servers->stopAll());
pcntl_async_signals(true);
foreach ([SIGINT, SIGTERM, SIGHUP] as $signal) {
    pcntl_signal($signal, function (int $signal) use ($say): void {
        $say("topologies: signal $signal, stopping the servers");
        exit(128 + $signal); // runs the shutdown function
    });
}

try {
    $say('== topology suite: starting 5 masters and a 3-master Redis Cluster' . ($opt['server-cpu'] === '' ? '' : " (servers on CPU {$opt['server-cpu']})"));
    $masters = [];
    for ($i = 0; $i < 5; $i++) {
        $masters[] = $servers->start();
    }
    $clusterNodes = $servers->startCluster(3);
    $topologies = [];
    foreach ([new Topology('single', [$masters[0]]), new Topology('redlock', array_slice($masters, 0, 3)),
              new Topology('redlock', $masters), new Topology('cluster', $clusterNodes)] as $t) {
        $topologies[$t->id()] = $t;
    }
    $say('   masters on ports ' . implode(', ', array_map(fn ($e) => $e->port, $masters))
        . '; cluster nodes on ' . implode(', ', array_map(fn ($e) => $e->port, $clusterNodes)));

    file_put_contents("$raw/topology-meta.json", json_encode([
        'topologies' => array_map(fn (Topology $t) => ['label' => $t->label(), 'ports' => array_map(fn ($e) => $e->port, $t->endpoints)], $topologies),
        'pinning' => $opt['pinning'],
        'loadavg' => implode(' ', array_slice(explode(' ', (string) @file_get_contents('/proc/loadavg')), 0, 3)),
        'reps' => $reps, 'quick' => $quick, 'seconds' => $seconds, 'procs' => $procs,
        'sections' => $sections, 'outside_us' => $outsideVariants,
    ], JSON_PRETTY_PRINT | JSON_UNESCAPED_UNICODE));

    /** @var list<array{0: string, 1: string}> [contender, topology id] pairs of one suite */
    $pairs = function (string $suite) use ($only): array {
        $out = [];
        foreach (topology_contenders() as $name => $c) {
            if ($only === null || in_array($name, $only, true)) {
                foreach ($c[$suite] as $id) {
                    $out[] = [$name, $id];
                }
            }
        }
        return $out;
    };
    $runner = new Runner($opt['so']);
    $label = fn (array $pair) => target_label($pair[0], $topologies[$pair[1]]);

    // --- 1. is every contender a lock on its topology?
    $say('== topology check: two processes, one key');
    $checks = [];
    foreach (array_unique(array_merge($pairs('uncontended'), $pairs('contended')), SORT_REGULAR) as [$name, $id]) {
        [$rc, $out] = $runner->run('check.php', ['contender' => $name, 'topology' => $topologies[$id]->arg()], 60);
        $checks["$name@$id"] = ['ok' => $rc === 0, 'message' => trim($out) ?: "exit code $rc"];
        $say('   ' . $checks["$name@$id"]['message']);
    }
    file_put_contents("$raw/topology-check.json", json_encode($checks, JSON_PRETTY_PRINT));
    $usable = fn (array $pair) => $checks["$pair[0]@$pair[1]"]['ok'] ?? false;
    $rotate = fn (array $list, int $by) => $list ? array_merge(array_slice($list, $by % count($list)), array_slice($list, 0, $by % count($list))) : [];

    // --- 2. the measurements
    for ($rep = 1; $rep <= $reps; $rep++) {
        $say("== topology repetition $rep/$reps: uncontended, 1 process, ~{$seconds} s each");
        foreach ($rotate($pairs('uncontended'), $rep - 1) as $pair) {
            if (!$usable($pair)) {
                continue;
            }
            [$name, $id] = $pair;
            [$rc, $out] = $runner->run('uncontended.php', ['contender' => $name, 'topology' => $topologies[$id]->arg(),
                'seconds' => $seconds, 'warmup' => $warmup, 'rep' => $rep], 120);
            $r = record_result("$raw/topology-uncontended.jsonl",
                ['suite' => 'uncontended', 'contender' => $name, 'topology' => $id, 'rep' => $rep], $rc, $out);
            $say(sprintf('   %-62s %s', $label($pair), isset($r['error']) ? 'ERROR ' . $r['error']
                : sprintf('%8.1f us/cycle  %d cycles', $r['us_per_cycle'], $r['cycles'])));
        }
        foreach ($outsideVariants as $outside) {
            $say(sprintf('== topology repetition %d/%d: contended, %d processes x %d sections, %g ms outside the lock',
                $rep, $reps, $procs, $sections, $outside / 1000));
            foreach ($rotate($pairs('contended'), $rep - 1) as $pair) {
                if (!$usable($pair)) {
                    continue;
                }
                [$name, $id] = $pair;
                [$rc, $out] = $runner->run('contended.php', ['contender' => $name, 'topology' => $topologies[$id]->arg(),
                    'procs' => $procs, 'sections' => $sections, 'outside-us' => $outside, 'wait' => 10, 'rep' => $rep], 300);
                $r = record_result("$raw/topology-contended.jsonl",
                    ['suite' => 'contended', 'contender' => $name, 'topology' => $id, 'rep' => $rep, 'outside_us' => $outside], $rc, $out);
                $say(sprintf('   %-62s %s', $label($pair), isset($r['error']) ? 'ERROR ' . $r['error']
                    : sprintf('%8.1f CS/s  wait p99 %8.2f ms  counter %d/%d  overlaps %d',
                        $r['cs_per_s'], $r['wait_p99_ms'], $r['counter'], $r['expected'], $r['overlaps'])));
            }
        }
    }
} finally {
    $servers->stopAll();
}

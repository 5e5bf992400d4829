<?php

declare(strict_types=1);

/*
 * Runs the whole benchmark against a running redis-server and writes the
 * raw results (JSON lines) to --raw; bench/report.php turns them into
 * tables and the chart. scripts/bench.sh is the entry point that starts
 * Redis, pins CPUs and calls both.
 *
 *   php bench/run.php --port=6379 --so=/path/redislock.so --raw=bench/results/raw [--reps=3 --quick=0 --procs=8 --only=a,b]
 *       [--floor=/path/token_pass]   (the hand-over floor, run once per repetition)
 *
 * --suites=main,topology: without "main" only meta.json is written (the
 * topology suite is bench/topologies.php).
 *
 * Order: for each repetition, every contender of the uncontended suite,
 * then the contended suite with 0 and with 1 ms of work outside the lock.
 * The contender order rotates by one each repetition, so no contender is
 * always first after a pause or always last.
 */

require __DIR__ . '/lib/bootstrap.php';
require __DIR__ . '/lib/Runner.php';
require __DIR__ . '/lib/Results.php';

$opt = cli_options([
    'port' => null, 'so' => null, 'raw' => null, 'reps' => '3', 'quick' => '0',
    'procs' => '8', 'sections' => '', 'seconds' => '', 'only' => '', 'pinning' => 'none', 'suites' => 'main,topology',
    'floor' => '',
]);
// BENCH_SUITES: "main" (check + uncontended + contended, here) and/or "topology"
// (bench/topologies.php, run by bench.sh after this script). Without "main"
// this script only writes meta.json.
$suites = array_values(array_filter(array_map('trim', explode(',', $opt['suites']))));
$quick = $opt['quick'] === '1';
$reps = max(1, (int) $opt['reps']);
$procs = max(2, (int) $opt['procs']);
$seconds = $opt['seconds'] !== '' ? (float) $opt['seconds'] : ($quick ? 0.3 : 1.5);
$warmup = $quick ? 0.1 : 0.3;
$sections = $opt['sections'] !== '' ? (int) $opt['sections'] : ($quick ? 40 : 200);
$outsideVariants = [0, 1000];
$port = (int) $opt['port'];
$raw = $opt['raw'];
$only = $opt['only'] === '' ? null : array_map('trim', explode(',', $opt['only']));

@mkdir($raw, 0777, true);
foreach (glob("$raw/*") ?: [] as $old) {
    unlink($old);
}
$runner = new Runner($opt['so']);
$say = fn (string $line) => fwrite(STDERR, $line . "\n");

// --- what was measured, for the report header
$redisInfo = (new Redis());
$redisInfo->connect('127.0.0.1', $port);
$server = $redisInfo->info('server');
$dpkg = fn (string $pkg) => trim((string) shell_exec('dpkg-query -W -f=\'${Version}\' ' . escapeshellarg($pkg) . ' 2>/dev/null')) ?: '?';
$git = trim((string) shell_exec('git -C ' . escapeshellarg(__DIR__ . '/..') . ' rev-parse --short HEAD 2>/dev/null'));
$dirty = trim((string) shell_exec('git -C ' . escapeshellarg(__DIR__ . '/..') . ' status --porcelain --untracked-files=no 2>/dev/null')) !== '';
preg_match('/^model name\s*:\s*(.+)$/m', (string) @file_get_contents('/proc/cpuinfo'), $cpu);
file_put_contents("$raw/meta.json", json_encode([
    'date' => gmdate('Y-m-d H:i:s') . ' UTC',
    'git' => $git . ($dirty ? '+dirty' : ''),
    'so_sha256' => substr(hash_file('sha256', $opt['so']), 0, 16),
    'redislock' => phpversion('redislock') ?: '?',
    // What the extension counted while it was measured (the contenders run
    // with the same php.ini): "pool" unless php.ini says otherwise.
    'stats' => RedisLock::stats()['scope'] . (RedisLock::stats('process')['enabled'] ? '' : ' (off)'),
    'php' => PHP_VERSION,
    'phpredis' => phpversion('redis') ?: '?',
    'predis' => $dpkg('php-predis'),
    'symfony_lock' => $dpkg('php-symfony-lock'),
    'laravel' => $dpkg('php-laravel-framework'),
    'redis_server' => $server['redis_version'] ?? '?',
    'cpu' => $cpu[1] ?? '?',
    'cpus' => (int) trim((string) shell_exec('nproc --all')),
    'loadavg' => implode(' ', array_slice(explode(' ', (string) @file_get_contents('/proc/loadavg')), 0, 3)),
    'pinning' => $opt['pinning'],
    'reps' => $reps, 'quick' => $quick, 'seconds' => $seconds, 'procs' => $procs,
    'sections' => $sections, 'outside_us' => $outsideVariants, 'suites' => $suites,
], JSON_PRETTY_PRINT | JSON_UNESCAPED_UNICODE));
$redisInfo->close();

if (!in_array('main', $suites, true)) {
    exit(0);
}

$wanted = fn (string $suite) => array_values(array_filter(array_keys(contenders()),
    fn ($n) => in_array($suite, contenders()[$n]['suites'], true) && ($only === null || in_array($n, $only, true))));

// --- 1. is every peer really a lock?
$say('== check: is every contender a working lock? (two processes, one key)');
$checks = [];
foreach ($wanted('contended') as $name) {
    if ($name === 'nolock') {
        continue;
    }
    [$rc, $out] = $runner->run('check.php', ['contender' => $name, 'port' => $port], 60);
    $checks[$name] = ['ok' => $rc === 0, 'message' => trim($out) ?: "exit code $rc"];
    $say('   ' . $checks[$name]['message']);
}
file_put_contents("$raw/check.json", json_encode($checks, JSON_PRETTY_PRINT));
$usable = fn (string $name) => ($checks[$name]['ok'] ?? true);

// --- 2. the suites
$rotate = fn (array $list, int $by) => $list ? array_merge(array_slice($list, $by % count($list)), array_slice($list, 0, $by % count($list))) : [];
$record = fn (string $file, array $base, int $rc, string $out): array => record_result("$raw/$file", $base, $rc, $out);

for ($rep = 1; $rep <= $reps; $rep++) {
    $say("== repetition $rep/$reps: uncontended, 1 process, ~{$seconds} s per contender");
    foreach ($rotate($wanted('uncontended'), $rep - 1) as $name) {
        if (!$usable($name)) {
            continue;
        }
        [$rc, $out] = $runner->run('uncontended.php',
            ['contender' => $name, 'port' => $port, 'seconds' => $seconds, 'warmup' => $warmup, 'rep' => $rep], 120);
        $r = $record('uncontended.jsonl', ['suite' => 'uncontended', 'contender' => $name, 'rep' => $rep], $rc, $out);
        $say(sprintf('   %-32s %s', contender_label($name), isset($r['error']) ? 'ERROR ' . $r['error']
            : sprintf('%8.1f us/cycle  %d cycles', $r['us_per_cycle'], $r['cycles'])));
    }
    foreach ($outsideVariants as $outside) {
        $say(sprintf('== repetition %d/%d: contended, %d processes x %d sections, %g ms outside the lock', $rep, $reps, $procs, $sections, $outside / 1000));
        foreach ($rotate($wanted('contended'), $rep - 1) as $name) {
            if (!$usable($name)) {
                continue;
            }
            [$rc, $out] = $runner->run('contended.php', ['contender' => $name, 'port' => $port, 'procs' => $procs,
                'sections' => $sections, 'outside-us' => $outside, 'wait' => 10, 'rep' => $rep], 300);
            $r = $record('contended.jsonl', ['suite' => 'contended', 'contender' => $name, 'rep' => $rep, 'outside_us' => $outside], $rc, $out);
            $say(sprintf('   %-32s %s', contender_label($name), isset($r['error']) ? 'ERROR ' . $r['error']
                : sprintf('%8.1f CS/s  wait p99 %8.2f ms  counter %d/%d  overlaps %d',
                    $r['cs_per_s'], $r['wait_p99_ms'], $r['counter'], $r['expected'], $r['overlaps'])));
        }
    }
    // The hand-over floor (bench/floor/token_pass.c, built by bench.sh),
    // in the same layout: this process's CPU affinity is the child's.
    if ($opt['floor'] !== '') {
        $out = [];
        exec('timeout 60 ' . escapeshellarg($opt['floor']) . ' ' . $port . ' 5000 2>&1', $out, $rc);
        $r = $record('floor.jsonl', ['suite' => 'floor', 'rep' => $rep], $rc, implode("\n", $out));
        $say(sprintf('   %-32s %s', 'hand-over floor (LPUSH/BLPOP)', isset($r['error']) ? 'ERROR ' . $r['error']
            : sprintf('p50 %.1f us  p99 %.1f us', $r['p50_us'], $r['p99_us'])));
    }
}

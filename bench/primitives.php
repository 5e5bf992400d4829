<?php

declare(strict_types=1);

/*
 * The primitives suite: redislock's Semaphore and read/write lock against
 * Symfony's and Laravel's, on the private redis-server of scripts/bench.sh,
 * each measurement in a fresh process (bench/primitive.php):
 *
 *   - semaphore: 4 permits, --procs-semaphore (16) processes x --sections
 *     sections, each holding a permit for 500 us, 1 ms of other work after;
 *   - rw: --procs-rw (8) processes x --sections sections, 10 % writes
 *     (seeded, the same sequence for every contender), 500 us inside,
 *     1 ms outside.
 *
 * Raw results go to <raw>/primitives.jsonl and <raw>/primitives-meta.json;
 * bench/report.php renders them (bench/report-primitives.php).
 *
 *   php -d extension=... bench/primitives.php --port=6379 --so=... --raw=... [--reps=3 --quick=0
 *       --sections= --procs-semaphore=16 --procs-rw=8 --only=a,b --pinning=label]
 */

require __DIR__ . '/lib/bootstrap.php';
require __DIR__ . '/lib/Runner.php';
require __DIR__ . '/lib/Results.php';

$opt = cli_options([
    'port' => null, 'so' => null, 'raw' => null, 'reps' => '3', 'quick' => '0', 'sections' => '',
    'procs-semaphore' => '16', 'procs-rw' => '8', 'only' => '', 'pinning' => 'none',
]);
$quick = $opt['quick'] === '1';
$reps = max(1, (int) $opt['reps']);
$sections = $opt['sections'] !== '' ? max(1, (int) $opt['sections']) : ($quick ? 20 : 60);
$procs = ['semaphore' => max(2, (int) $opt['procs-semaphore']), 'rw' => max(2, (int) $opt['procs-rw'])];
// The workload; bench/README.md documents these values.
$params = ['permits' => 4, 'hold-us' => 500, 'outside-us' => 1000, 'write-pct' => 10, 'seed' => 1, 'wait' => 10];
$raw = $opt['raw'];
$only = $opt['only'] === '' ? null : array_map('trim', explode(',', $opt['only']));
$say = fn (string $line) => fwrite(STDERR, $line . "\n");
@mkdir($raw, 0777, true);
foreach (glob("$raw/primitives*") ?: [] as $old) {
    unlink($old);
}

file_put_contents("$raw/primitives-meta.json", json_encode([
    'pinning' => $opt['pinning'],
    'loadavg' => implode(' ', array_slice(explode(' ', (string) @file_get_contents('/proc/loadavg')), 0, 3)),
    'symfony_semaphore' => trim((string) shell_exec("dpkg-query -W -f='\${Version}' php-symfony-semaphore 2>/dev/null")) ?: '?',
    'reps' => $reps, 'quick' => $quick, 'sections' => $sections, 'procs' => $procs,
] + $params, JSON_PRETTY_PRINT | JSON_UNESCAPED_UNICODE));

$runner = new Runner($opt['so']);
$rotate = fn (array $list, int $by) => $list ? array_merge(array_slice($list, $by % count($list)), array_slice($list, 0, $by % count($list))) : [];
for ($rep = 1; $rep <= $reps; $rep++) {
    foreach (PRIMITIVE_WORKLOADS as $workload) {
        $say(sprintf('== primitives repetition %d/%d: %s, %d processes x %d sections%s', $rep, $reps, $workload,
            $procs[$workload], $sections, $workload === 'semaphore' ? ", {$params['permits']} permits" : ", {$params['write-pct']} % writes"));
        $names = array_values(array_filter(primitive_contender_names($workload), fn ($n) => $only === null || in_array($n, $only, true)));
        foreach ($rotate($names, $rep - 1) as $name) {
            $args = ['workload' => $workload, 'contender' => $name, 'port' => $opt['port'], 'procs' => $procs[$workload],
                'sections' => $sections, 'rep' => $rep] + $params;
            [$rc, $out] = $runner->run('primitive.php', $args, 240);
            $r = record_result("$raw/primitives.jsonl", ['suite' => 'primitives', 'workload' => $workload, 'contender' => $name, 'rep' => $rep], $rc, $out);
            $say(sprintf('   %-42s %s', primitive_label($name, $workload), match (true) {
                isset($r['error']) => 'ERROR ' . $r['error'],
                isset($r['skipped']) => 'skipped: ' . $r['skipped'],
                default => sprintf('%8.1f sections/s  wait p99 %8.2f ms  max %s %d  %s',
                    $r['sections_per_s'], $r['wait_p99_ms'], $workload === 'semaphore' ? 'holders' : 'readers', $r['max_holders'],
                    $workload === 'semaphore' ? sprintf('done %d/%d', $r['done'], $r['expected'])
                        : sprintf('write violations %d, writes %d/%d', $r['rw_violations'], $r['write_counter'], $r['writes'])),
            }));
        }
    }
}

<?php

declare(strict_types=1);

/*
 * Turns the raw results of bench/run.php into the report: one table per
 * suite (medians over the repetitions, with ratios against redislock), the
 * command mix, the correctness verdicts, and the wait-time chart.
 *
 *   php bench/report.php --raw=bench/results/raw --out=bench/results [--name=latest]
 *
 * The topology and primitives suites' parts are in report-topology.php and
 * report-primitives.php (included).
 * Writes <out>/latest.txt (the same text as stdout) and <out>/wait-times.svg;
 * with --name=N (scripts/bench.sh: BENCH_REPORT=N) <out>/N.txt and
 * <out>/N-wait-times.svg instead.
 * Exits 1 when a lock lost an update, overlapped or timed out, when the
 * no-lock control shows no violation (the checker would be broken), or
 * when a contender produced no numbers.
 */

require __DIR__ . '/lib/bootstrap.php';
require __DIR__ . '/lib/Table.php';
require __DIR__ . '/lib/WaitChart.php';

$opt = cli_options(['raw' => null, 'out' => null, 'name' => 'latest']);
$textFile = $opt['out'] . '/' . $opt['name'] . '.txt';
$chartFile = $opt['out'] . '/' . ($opt['name'] === 'latest' ? '' : $opt['name'] . '-') . 'wait-times.svg';
$raw = $opt['raw'];
$meta = json_decode((string) @file_get_contents("$raw/meta.json"), true) ?: [];
$checks = json_decode((string) @file_get_contents("$raw/check.json"), true) ?: [];
$readJsonl = fn (string $file) => array_values(array_filter(array_map(
    fn ($l) => json_decode($l, true), file("$raw/$file", FILE_IGNORE_NEW_LINES | FILE_SKIP_EMPTY_LINES) ?: [])));
$uncontended = is_file("$raw/uncontended.jsonl") ? $readJsonl('uncontended.jsonl') : [];
$contended = is_file("$raw/contended.jsonl") ? $readJsonl('contended.jsonl') : [];
$floors = is_file("$raw/floor.jsonl") ? $readJsonl('floor.jsonl') : [];
$problems = [];

/** Results of one contender (and variant), split into good runs and errors. */
$group = function (array $runs, callable $match): array {
    $ok = $errors = [];
    foreach ($runs as $r) {
        if ($match($r)) {
            isset($r['error']) ? $errors[] = "rep {$r['rep']}: {$r['error']}" : $ok[] = $r;
        }
    }
    return [$ok, $errors];
};
$med = fn (array $runs, string $field) => Stats::median(array_column($runs, $field));
$mix = function (array $runs, string $field): string {
    $sum = [];
    foreach ($runs as $r) {
        foreach ($r[$field] as $cmd => $n) {
            $sum[$cmd][] = $n;
        }
    }
    $parts = [];
    foreach ($sum as $cmd => $values) {
        $m = Stats::median(array_pad($values, count($runs), 0));
        if ($m >= 0.005) {
            $parts[] = strtoupper($cmd) . ' ' . rtrim(rtrim(number_format($m, 2, '.', ''), '0'), '.');
        }
    }
    return implode(', ', $parts) ?: '(none)';
};

/**
 * One row of a contended table (the main suite's and the topology suite's),
 * with the mutual-exclusion verdict; a violation or time-out is added to $problems.
 */
$contendedRow = function (string $label, bool $control, array $ok, float $outside, ?float $rlRate, ?float $rlP99) use ($med, &$problems): array {
    $lost = array_sum(array_map(fn ($r) => $r['expected'] - $r['counter'], $ok));
    $overlaps = array_sum(array_column($ok, 'overlaps'));
    $timeouts = array_sum(array_column($ok, 'timeouts')) + array_sum(array_column($ok, 'release_failures'));
    $violated = $lost !== 0 || $overlaps !== 0;
    if ($control) {
        $verdict = $violated ? 'violated (expected)' : 'CHECKER BROKEN';
        if (!$violated) {
            $problems[] = sprintf('the no-lock control (%g ms outside) shows no violation: the checker cannot be trusted', $outside / 1000);
        }
    } else {
        $verdict = $violated ? 'VIOLATED' : ($timeouts ? 'TIMEOUTS' : 'ok');
        if ($violated || $timeouts) {
            $problems[] = sprintf('%s (%g ms outside): %d lost updates, %d overlaps, %d timeouts/failed releases',
                $label, $outside / 1000, $lost, $overlaps, $timeouts);
        }
    }
    $p99 = $med($ok, 'wait_p99_ms');
    $rate = $med($ok, 'cs_per_s');
    return [
        $label,
        Table::num($rate),
        Table::pct(Stats::spread(array_column($ok, 'cs_per_s'))),
        $control ? '-' : Table::ratio($rlRate, $rate, true),
        Table::sig($med($ok, 'handoff_p50_us')),
        Table::sig($med($ok, 'handoff_p99_us')),
        Table::pct($med($ok, 'same_holder_pct')),
        Table::sig($med($ok, 'wait_p50_ms')),
        Table::sig($p99),
        Table::sig($med($ok, 'wait_max_ms')),
        $control ? '-' : Table::ratio($rlP99, $p99, false),
        Table::num($med($ok, 'rt_per_cs'), 2),
        Table::num($med($ok, 'cpu_us_per_cs'), 0),
        (string) $timeouts,
        $lost === 0 ? 'ok' : "-$lost",
        (string) $overlaps,
        $verdict,
    ];
};
$contendedHeaders = ['contender', "CS/s\n", "spread\n", "x CS/s\n", "handoff us\np50", "\np99", "same\nholder",
    "wait ms\np50", "\np99", "\nmax", "x wait\np99", "round trips\n/CS", "CPU us\n/CS", "time-\nouts", "counter\n", "overlaps\n", "mutual\nexclusion"];
$contendedLegend = <<<TXT

  CS/s: critical sections per second, from the common start time to the last process's end.
  handoff: one holder's exit to the next holder's entry (merged hrtime log), only where someone was waiting at the exit.
  same holder: share of those handoffs won by the process that had just released (re-acquired although others waited).
  wait: per acquire, from the call to entering the critical section. time-outs: acquires that gave up after 10 s, plus failed releases.
  counter: "ok" when the shared counter equals processes x sections (summed over repetitions: -N = N lost updates).
  overlaps: critical sections that started before an earlier one ended (summed over repetitions).
  round trips / CPU us: Redis reads (as above) and user + system time of all processes, per critical section, polling included.

TXT;

$text = sprintf("redislock benchmark, %s\n", $meta['date'] ?? '?');
$text .= sprintf("redislock %s (git %s, .so sha256 %s, statistics: %s) | PHP %s | phpredis %s | Predis %s | Symfony Lock %s | Laravel %s | Redis %s\n",
    $meta['redislock'] ?? '?', $meta['git'] ?? '?', $meta['so_sha256'] ?? '?', $meta['stats'] ?? '?', $meta['php'] ?? '?', $meta['phpredis'] ?? '?',
    $meta['predis'] ?? '?', $meta['symfony_lock'] ?? '?', $meta['laravel'] ?? '?', $meta['redis_server'] ?? '?');
$text .= sprintf("%s, %d CPUs, load average at start %s | pinning: %s\n",
    $meta['cpu'] ?? '?', $meta['cpus'] ?? 0, $meta['loadavg'] ?? '?', $meta['pinning'] ?? '?');
$text .= sprintf("%d repetition(s)%s; every number is the median over the repetitions; loopback Redis, private server, fresh key per run.\n",
    $meta['reps'] ?? 0, !empty($meta['quick']) ? ', QUICK run (short, noisier)' : '');
$text .= "xN columns: redislock is N times better than that contender on the metric named (x0.50: redislock is 2 times worse).\n";

$mainRan = in_array('main', $meta['suites'] ?? ['main'], true);
$chartPanels = [];
if ($mainRan) {
    // ---------------------------------------------------------------- checks
    $text .= "\nPeer check (two processes, one key: exclusive while held, blocked acquire returns after release):\n";
    foreach ($checks as $name => $c) {
        $text .= '  ' . $c['message'] . "\n";
        if (!$c['ok']) {
            $problems[] = contender_label($name) . ' failed the check and was not measured';
        }
    }

    // ---------------------------------------------------------------- uncontended
    $text .= sprintf("\nUNCONTENDED: 1 process, acquire + release on one key, ~%s s per contender after warm-up\n", $meta['seconds'] ?? '?');
    $rl = $group($uncontended, fn ($r) => $r['contender'] === 'redislock')[0];
    $rlUs = $med($rl, 'us_per_cycle');
    $rlCpu = $med($rl, 'cpu_us_per_cycle');
    $rows = $mixes = [];
    foreach (contenders() as $name => $c) {
        if (!in_array('uncontended', $c['suites'], true)) {
            continue;
        }
        [$ok, $errors] = $group($uncontended, fn ($r) => $r['contender'] === $name);
        if (!$ok && !$errors) {
            continue;
        }
        foreach ($errors as $e) {
            $problems[] = "uncontended {$c['label']}: $e";
        }
        if (!$ok) {
            $rows[] = [$c['label'], 'FAILED', '-', '-', '-', '-', '-', '-', '-'];
            continue;
        }
        $us = $med($ok, 'us_per_cycle');
        $cpu = $med($ok, 'cpu_us_per_cycle');
        $rows[] = [
            $c['label'],
            Table::num($med($ok, 'cycles_per_s')),
            Table::num($us, 1),
            Table::pct(Stats::spread(array_column($ok, 'us_per_cycle'))),
            Table::ratio($rlUs, $us, false),
            Table::num($cpu, 1),
            Table::ratio($rlCpu, $cpu, false),
            Table::num($med($ok, 'rt_per_cycle'), 2),
            Table::num($med($ok, 'cmds_per_cycle'), 2),
        ];
        $mixes[] = sprintf('  %-32s %s', $c['label'], $mix($ok, 'calls_per_cycle'));
    }
    $text .= Table::render(
        ['contender', "cycles/s\n", "us/cycle\n", "spread\n", "x time\n", "CPU us\n/cycle", "x CPU\n", "round trips\n/cycle", "commands\n/cycle"],
        $rows, 'lrrrrrrrr');
    $text .= <<<TXT
      us/cycle: wall time of acquire + release; spread: (max - min) / median over the repetitions.
      CPU us: user + system time of the PHP process (getrusage), per cycle.
      round trips: top-level requests Redis read (INFO total_reads_processed; no client pipelines, so one read = one round trip).
      commands: INFO total_commands_processed, which also counts the commands a Lua script runs with redis.call().
      Both exclude the benchmark's own INFO calls (the cost of one snapshot is measured and subtracted).
    Command mix per cycle (INFO commandstats; includes commands run inside scripts, so GET/DEL/Z* under EVAL/EVALSHA are not round trips):

    TXT;
    $text .= implode("\n", $mixes) . "\n";

    // ---------------------------------------------------------------- contended
    $chartPanels = [];
    foreach ($meta['outside_us'] ?? [0, 1000] as $outside) {
        $text .= sprintf("\nCONTENDED: %d processes x %d critical sections on one key, %g ms of work outside the lock\n",
            $meta['procs'] ?? 0, $meta['sections'] ?? 0, $outside / 1000);
        $text .= "  critical section: read counter (file), usleep(200), write counter + 1; each contender blocks with its own mechanism\n";
        $inVariant = fn ($name) => fn ($r) => $r['contender'] === $name && (int) $r['outside_us'] === (int) $outside;
        $rl = $group($contended, $inVariant('redislock'))[0];
        $rlRate = $med($rl, 'cs_per_s');
        $rlP99 = $med($rl, 'wait_p99_ms');
        $rows = $mixes = [];
        $series = [];
        foreach (contenders() as $name => $c) {
            if (!in_array('contended', $c['suites'], true)) {
                continue;
            }
            [$ok, $errors] = $group($contended, $inVariant($name));
            if (!$ok && !$errors) {
                continue;
            }
            foreach ($errors as $e) {
                $problems[] = sprintf('contended (%g ms outside) %s: %s', $outside / 1000, $c['label'], $e);
            }
            if (!$ok) {
                $rows[] = array_merge([$c['label'], 'FAILED'], array_fill(0, 15, '-'));
                continue;
            }
            $control = $name === 'nolock';
            $rows[] = $contendedRow($c['label'], $control, $ok, $outside, $rlRate, $rlP99);
            $mixes[] = sprintf('  %-32s %s', $c['label'], $mix($ok, 'calls_per_cs'));
            if (!$control) {
                $series[$c['label']] = array_merge(...array_column($ok, 'waits_us'));
            }
        }
        $text .= Table::render($contendedHeaders, $rows, 'lrrrrrrrrrrrrrrrl');
        $chartPanels[] = [
            'title' => sprintf('%d processes, one key, %g ms of work outside the lock', $meta['procs'] ?? 0, $outside / 1000),
            'series' => $series,
        ];
        $text .= "Command mix per critical section (INFO commandstats, includes commands inside scripts):\n" . implode("\n", $mixes) . "\n";
    }
    $text .= $contendedLegend;
    require __DIR__ . '/report-budget.php';
}

require __DIR__ . '/report-topology.php';
require __DIR__ . '/report-primitives.php';

if ($problems) {
    $text .= "\nPROBLEMS:\n" . implode("\n", array_map(fn ($p) => "  - $p", $problems)) . "\n";
} else {
    $text .= "\nAll contenders produced numbers; every lock kept mutual exclusion; the no-lock control was caught.\n";
}

echo $text;
@mkdir($opt['out'], 0777, true);
file_put_contents($textFile, $text);
$mainRan && file_put_contents($chartFile, WaitChart::render(
    'Wait per acquire under contention (percentiles, log time axis)',
    sprintf('redislock %s vs PHP peers, loopback Redis %s, %s; all repetitions merged; the no-lock control is not drawn',
        $meta['redislock'] ?? '?', $meta['redis_server'] ?? '?', $meta['date'] ?? '?'),
    $chartPanels));
fwrite(STDERR, "report: $textFile" . ($mainRan ? ", $chartFile" : '') . "\n");
exit($problems ? 1 : 0);

<?php

declare(strict_types=1);

/*
 * The topology suite's part of the report (bench/topologies.php wrote the
 * raw results). Included by bench/report.php, in its scope: it appends to
 * $text and $problems and uses report.php's $group, $med, $mix,
 * $contendedRow, $contendedHeaders and $contendedLegend.
 */

if (!is_file("$raw/topology-meta.json")) {
    return;
}
$tmeta = json_decode((string) file_get_contents("$raw/topology-meta.json"), true) ?: [];
$tchecks = json_decode((string) @file_get_contents("$raw/topology-check.json"), true) ?: [];
$tUncontended = is_file("$raw/topology-uncontended.jsonl") ? $readJsonl('topology-uncontended.jsonl') : [];
$tContended = is_file("$raw/topology-contended.jsonl") ? $readJsonl('topology-contended.jsonl') : [];
$topoLabel = fn (string $id) => $tmeta['topologies'][$id]['label'] ?? $id;
/** Targets: the most redislock on this topology may cost, as a multiple of redislock on 1 server. */
$targets = ['redlock5' => 1.3, 'cluster3' => 1.1];

$text .= "\n" . str_repeat('=', 100) . "\nTOPOLOGY SUITE: redislock on 1 server, Redlock over 3 and 5 masters, a Redis Cluster of 3 masters;\n";
$text .= "Symfony Lock's CombinedStore (ConsensusStrategy) over the same 5 masters as the peer.\n";
$ports = [];
foreach ($tmeta['topologies'] ?? [] as $id => $t) {
    $ports[] = sprintf('%s: %s', $t['label'], implode(',', $t['ports']));
}
$text .= sprintf("Servers (each its own redis-server process, loopback, --save '' --appendonly no; cluster: no replicas, node timeout 3 s): %s\n",
    implode(' | ', $ports));
$text .= sprintf("Pinning: %s | load average at start %s | %d repetition(s)%s, medians\n",
    $tmeta['pinning'] ?? '?', $tmeta['loadavg'] ?? '?', $tmeta['reps'] ?? 0, !empty($tmeta['quick']) ? ', QUICK run' : '');

$text .= "\nCheck (two processes, one key: exclusive while held, blocked acquire returns after release):\n";
foreach ($tchecks as $pair => $c) {
    $text .= '  ' . $c['message'] . "\n";
    if (!$c['ok']) {
        $problems[] = "topology suite: $pair failed the check and was not measured";
    }
}

// ---------------------------------------------------------------- uncontended
$text .= sprintf("\nTOPOLOGY UNCONTENDED: 1 process, acquire + release on one fresh key, fresh lock object per cycle, ~%s s each after warm-up\n",
    $tmeta['seconds'] ?? '?');
$of = fn (string $name, string $id) => $group($tUncontended, fn ($r) => $r['contender'] === $name && $r['topology'] === $id);
$baseByRep = array_column($of('redislock', 'single')[0], 'us_per_cycle', 'rep');
/**
 * Time relative to redislock on 1 server, per repetition (both measured
 * minutes apart at most, in the same machine state), then the median: the
 * machine's speed drifts between repetitions far more than these ratios do.
 */
$ratioToBase = function (array $ok) use ($baseByRep): ?float {
    $ratios = [];
    foreach ($ok as $r) {
        if (!empty($baseByRep[$r['rep']])) {
            $ratios[] = $r['us_per_cycle'] / $baseByRep[$r['rep']];
        }
    }
    return Stats::median($ratios);
};
$ratioSpread = function (array $ok) use ($baseByRep): ?float {
    $ratios = [];
    foreach ($ok as $r) {
        if (!empty($baseByRep[$r['rep']])) {
            $ratios[] = $r['us_per_cycle'] / $baseByRep[$r['rep']];
        }
    }
    return Stats::spread($ratios);
};
$rows = $mixes = $verdicts = [];
foreach (topology_contenders() as $name => $c) {
    foreach ($c['uncontended'] as $id) {
        [$ok, $errors] = $of($name, $id);
        if (!$ok && !$errors) {
            continue;
        }
        foreach ($errors as $e) {
            $problems[] = "topology uncontended {$c['label']}, {$topoLabel($id)}: $e";
        }
        if (!$ok) {
            $rows[] = [$topoLabel($id), $c['label'], 'FAILED', '-', '-', '-', '-', '-', '-', '-', '-'];
            continue;
        }
        $us = $med($ok, 'us_per_cycle');
        $ratio = $ratioToBase($ok);
        $target = '-';
        if ($name === 'redislock' && isset($targets[$id])) {
            $met = $ratio !== null && $ratio <= $targets[$id];
            $target = sprintf('<= %.1fx: %s', $targets[$id], $met ? 'met' : 'NOT met');
            $verdicts[] = sprintf('  %s: %.2fx redislock on 1 server (target <= %.1fx): %s',
                $topoLabel($id), $ratio ?? 0, $targets[$id], $met ? 'met' : 'NOT met');
        }
        $rows[] = [
            $topoLabel($id),
            $c['label'],
            Table::num($med($ok, 'cycles_per_s')),
            Table::num($us, 1),
            Table::pct(Stats::spread(array_column($ok, 'us_per_cycle'))),
            $ratio === null ? '-' : sprintf('%.2fx', $ratio),
            Table::pct($ratioSpread($ok)),
            $target,
            Table::num($med($ok, 'cpu_us_per_cycle'), 1),
            Table::num($med($ok, 'rt_per_cycle'), 2),
            Table::num($med($ok, 'cmds_per_cycle'), 2),
        ];
        $mixes[] = sprintf('  %-18s %-50s %s', $topoLabel($id), $c['label'], $mix($ok, 'calls_per_cycle'));
    }
}
if (!$rows) {
    $problems[] = 'topology suite: no uncontended results (did bench/topologies.php fail?)';
    $rows[] = ['(no results)', '-', '-', '-', '-', '-', '-', '-', '-', '-', '-'];
}
$text .= Table::render(
    ['topology', 'contender', "cycles/s\n", "us/cycle\n", "spread\n", "time vs\n1 server", "ratio\nspread", "target\n", "CPU us\n/cycle", "round trips\n/cycle", "commands\n/cycle"],
    $rows, 'llrrrrrlrrr');
$rlRedlock = $med($of('redislock', 'redlock5')[0], 'us_per_cycle');
$sfRedlock = $med($of('symfony', 'redlock5')[0], 'us_per_cycle');
$text .= "  time vs 1 server: us/cycle divided by redislock's on 1 server (M1, the first of the 5 masters) in the same repetition;\n";
$text .= "    median over the repetitions (ratio spread: (max - min) / median of those ratios). The machine's speed drifts between\n";
$text .= "    repetitions (see spread) much more than the ratios do.\n";
$text .= "  round trips / commands: summed over every server of the topology (INFO on each; our own INFO calls subtracted).\n";
$text .= "  CPU us: user + system time of the PHP process, per cycle.\n";
if ($rlRedlock && $sfRedlock) {
    $text .= sprintf("  On the same 5 masters redislock's Redlock is %.1fx faster than Symfony's CombinedStore (%.1f vs %.1f us/cycle).\n",
        $sfRedlock / $rlRedlock, $rlRedlock, $sfRedlock);
}
$text .= "Targets:\n" . ($verdicts ? implode("\n", $verdicts) : '  (not measured)') . "\n";
$text .= "Command mix per cycle, all servers (INFO commandstats; includes commands run inside scripts):\n" . implode("\n", $mixes) . "\n";

// ---------------------------------------------------------------- contended
foreach ($tmeta['outside_us'] ?? [] as $outside) {
    $text .= sprintf("\nTOPOLOGY CONTENDED, Redlock over 5 masters: %d processes x %d critical sections on one key, %g ms of work outside the lock\n",
        $tmeta['procs'] ?? 0, $tmeta['sections'] ?? 0, $outside / 1000);
    $text .= "  critical section and checks as in CONTENDED above; redislock blocks with acquire(10.0), Symfony with acquire(true)\n";
    $inVariant = fn (string $name, string $id) => fn ($r) => $r['contender'] === $name && $r['topology'] === $id
        && (int) $r['outside_us'] === (int) $outside;
    $rl = $group($tContended, $inVariant('redislock', 'redlock5'))[0];
    $rlRate = $med($rl, 'cs_per_s');
    $rlP99 = $med($rl, 'wait_p99_ms');
    $rows = $mixes = [];
    foreach (topology_contenders() as $name => $c) {
        foreach ($c['contended'] as $id) {
            [$ok, $errors] = $group($tContended, $inVariant($name, $id));
            if (!$ok && !$errors) {
                continue;
            }
            $label = "{$c['label']}, {$topoLabel($id)}";
            foreach ($errors as $e) {
                $problems[] = sprintf('topology contended (%g ms outside) %s: %s', $outside / 1000, $label, $e);
            }
            if (!$ok) {
                $rows[] = array_merge([$label, 'FAILED'], array_fill(0, 15, '-'));
                continue;
            }
            $rows[] = $contendedRow($label, false, $ok, $outside, $rlRate, $rlP99);
            $mixes[] = sprintf('  %-70s %s', $label, $mix($ok, 'calls_per_cs'));
        }
    }
    if (!$rows) {
        $problems[] = sprintf('topology suite: no contended results (%g ms outside; did bench/topologies.php fail?)', $outside / 1000);
        $rows[] = array_merge(['(no results)'], array_fill(0, 16, '-'));
    }
    $text .= Table::render($contendedHeaders, $rows, 'lrrrrrrrrrrrrrrrl');
    $text .= "Command mix per critical section, all servers (INFO commandstats, includes commands inside scripts):\n" . implode("\n", $mixes) . "\n";
}
if (!$mainRan) {
    $text .= $contendedLegend;
} else {
    $text .= "  Columns as in CONTENDED above; round trips summed over all 5 masters.\n";
}

<?php

declare(strict_types=1);

/*
 * The budget tables (required by bench/report.php after the main suite):
 * redislock against the targets it is held to, from the same raw results.
 *
 * COST: the uncontended cycle against the recipe it replaces (phpredis
 * SET NX PX + EVALSHA compare-and-delete), round by round (each
 * repetition runs both, in rotating order): time per cycle (target: the
 * median of the per-round ratios <= 1.00), Redis commands per cycle
 * (target: the recipe's + 1) and Redis CPU per cycle (target: <= 1.05x).
 *
 * PRIMITIVES COST: an uncontended read hold and permit cycle (contenders
 * redislock-read, redislock-permit) against the lock's, round by round:
 * Redis commands per cycle (target <= 8) and Redis CPU per cycle (target
 * <= 1.25x the lock's).
 *
 * CONTENDED: per workload and repetition, redislock against the best peer
 * of that repetition (the one with the most CS/s; the no-lock control and
 * the bridges, which run on redislock, are not peers): CS/s ratio (target
 * >= 1.00 in every repetition), p99 wait ratio against that peer (target
 * <= 0.10), and redislock's longest wait.
 *
 * Expects $uncontended, $contended, $meta and $text from report.php; adds
 * to $text. Misses are reported as such, not as problems (they do not make
 * the benchmark fail).
 */

/** The records of $contender, by repetition. */
$byRep = function (array $runs, string $contender, ?int $outside = null): array {
    $out = [];
    foreach ($runs as $r) {
        if ($r['contender'] === $contender && !isset($r['error'])
            && ($outside === null || (int) $r['outside_us'] === $outside)) {
            $out[(int) $r['rep']] = $r;
        }
    }
    return $out;
};
$verdict = fn (bool $met) => $met ? 'met' : 'NOT MET';
$ratios = fn (array $list) => implode(' ', array_map(fn ($x) => sprintf('%.2f', $x), $list));

// ------------------------------------------------------------------ cost
$ours = $byRep($uncontended, 'redislock');
$recipe = $byRep($uncontended, 'phpredis-evalsha');
$reps = array_keys(array_intersect_key($ours, $recipe));
sort($reps);
$text .= "\nCOST BUDGET: uncontended acquire + release against the recipe it replaces (phpredis SET NX PX + EVALSHA)\n";
if ($reps === []) {
    $text .= "  (not measured: redislock and phpredis-evalsha need the uncontended suite)\n";
} else {
    $time = array_map(fn ($rep) => $ours[$rep]['us_per_cycle'] / $recipe[$rep]['us_per_cycle'], $reps);
    $cmdsOurs = Stats::median(array_map(fn ($rep) => $ours[$rep]['cmds_per_cycle'], $reps));
    $cmdsRecipe = Stats::median(array_map(fn ($rep) => $recipe[$rep]['cmds_per_cycle'], $reps));
    $cpuOurs = Stats::median(array_map(fn ($rep) => $ours[$rep]['redis_cpu_us_per_cycle'] ?? 0, $reps));
    $cpuRecipe = Stats::median(array_map(fn ($rep) => $recipe[$rep]['redis_cpu_us_per_cycle'] ?? 0, $reps));
    $timeRatio = Stats::median($time);
    $cpuRatio = $cpuRecipe > 0 ? $cpuOurs / $cpuRecipe : NAN;
    $rows = [
        ['time per cycle (median of per-round ratios)', sprintf('%.1f us', Stats::median(array_column($ours, 'us_per_cycle'))),
            sprintf('%.1f us', Stats::median(array_column($recipe, 'us_per_cycle'))), sprintf('%.3f', $timeRatio), '<= 1.00',
            $verdict($timeRatio <= 1.0)],
        ['Redis commands per cycle', Table::num($cmdsOurs, 2), Table::num($cmdsRecipe, 2), sprintf('+%.2f', $cmdsOurs - $cmdsRecipe),
            '<= +1', $verdict($cmdsOurs <= $cmdsRecipe + 1.005)],
        ['Redis CPU per cycle', sprintf('%.2f us', $cpuOurs), sprintf('%.2f us', $cpuRecipe), sprintf('%.3f', $cpuRatio), '<= 1.05',
            $verdict($cpuRatio <= 1.05)],
        ['PHP CPU per cycle', sprintf('%.2f us', Stats::median(array_column($ours, 'cpu_us_per_cycle'))),
            sprintf('%.2f us', Stats::median(array_column($recipe, 'cpu_us_per_cycle'))), '', '', ''],
    ];
    $text .= Table::render(['', "redislock\n", "recipe\n", "ratio\n", "target\n", "\n"], $rows, 'lrrrrl');
    $text .= sprintf("  per-round time ratios (%d rounds, each round runs both, order rotating): %s\n", count($reps), $ratios($time));
}

// ------------------------------------------------------- primitives cost
$lockRuns = $byRep($uncontended, 'redislock');
$text .= "\nPRIMITIVES COST BUDGET: an uncontended read hold and permit cycle against the lock's (redislock)\n";
$rows = [];
foreach (['redislock-read' => 'read hold', 'redislock-permit' => 'permit (of 4)'] as $name => $label) {
    $mine = $byRep($uncontended, $name);
    $both = array_keys(array_intersect_key($mine, $lockRuns));
    sort($both);
    if ($both === []) {
        $rows[] = [$label, '(not measured)', '', '', '', '', ''];
        continue;
    }
    $cmds = Stats::median(array_map(fn ($rep) => $mine[$rep]['cmds_per_cycle'], $both));
    $cpu = array_map(fn ($rep) => ($mine[$rep]['redis_cpu_us_per_cycle'] ?? 0)
        / max(1e-9, $lockRuns[$rep]['redis_cpu_us_per_cycle'] ?? 0), $both);
    $cpuRatio = Stats::median($cpu);
    $rows[] = [$label, Table::num($cmds, 2), '<= 8', $verdict($cmds <= 8.005),
        sprintf('%.2f us', Stats::median(array_map(fn ($rep) => $mine[$rep]['redis_cpu_us_per_cycle'] ?? 0, $both))),
        sprintf('%.3f (%s)', $cpuRatio, $ratios($cpu)), $verdict($cpuRatio <= 1.25)];
}
$text .= Table::render(['', "commands\n/cycle", "target\n", "\n", "Redis CPU\n/cycle", "CPU ratio to the lock's\n(median; per round)", "<= 1.25\n"],
    $rows, 'lrrlrrl');

// ------------------------------------------------------------- contended
$peers = array_values(array_filter(array_keys(contenders()), fn ($n) => in_array('contended', contenders()[$n]['suites'], true)
    && $n !== 'redislock' && $n !== 'nolock' && !str_contains($n, 'redislock')));
$text .= "\nCONTENDED BUDGET: redislock against the best peer of each repetition (peers: " . implode(', ', $peers) . ")\n";
$rows = [];
foreach ($meta['outside_us'] ?? [0, 1000] as $outside) {
    $mine = $byRep($contended, 'redislock', (int) $outside);
    $rate = $p99 = [];
    $longest = 0.0;
    foreach ($mine as $rep => $r) {
        $best = null;
        foreach ($peers as $peer) {
            $p = $byRep($contended, $peer, (int) $outside)[$rep] ?? null;
            if ($p !== null && ($best === null || $p['cs_per_s'] > $best['cs_per_s'])) {
                $best = $p;
            }
        }
        if ($best === null) {
            continue;
        }
        $rate[] = $r['cs_per_s'] / $best['cs_per_s'];
        $p99[] = $best['wait_p99_ms'] > 0 ? $r['wait_p99_ms'] / $best['wait_p99_ms'] : NAN;
        $longest = max($longest, (float) $r['wait_max_ms']);
    }
    if ($rate === []) {
        $rows[] = [sprintf('%g ms outside', $outside / 1000), '(not measured)', '', '', '', ''];
        continue;
    }
    $rows[] = [
        sprintf('%g ms outside', $outside / 1000),
        $ratios($rate) . sprintf('  (min %.2f)', min($rate)),
        $verdict(min($rate) >= 1.0),
        $ratios($p99) . sprintf('  (max %.2f)', max($p99)),
        $verdict(max($p99) <= 0.10),
        sprintf('%.1f', $longest),
    ];
}
$text .= Table::render(['workload', "CS/s / best peer's, per repetition\n(target >= 1.00 in each)", "\n",
    "p99 wait / that peer's, per repetition\n(target <= 0.10)", "\n", "redislock longest\nwait, ms"], $rows, 'llllll');

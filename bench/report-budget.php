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
 * >= 1.00 in every repetition back to back, >= 1.5 with 1 ms of work
 * outside), p99 wait ratio against that peer (target <= 0.10), and
 * redislock's longest wait.
 *
 * The figures come from bench/lib/Budget.php, which bench/report-layouts.php
 * (one column per CPU layout) shares.
 *
 * Expects $uncontended, $contended, $meta and $text from report.php; adds
 * to $text. Misses are reported as such, not as problems (they do not make
 * the benchmark fail).
 */

require_once __DIR__ . '/lib/Budget.php';

$verdict = fn (bool $met) => $met ? 'met' : 'NOT MET';
$ratios = fn (array $list) => implode(' ', array_map(fn ($x) => sprintf('%.2f', $x), $list));

// ------------------------------------------------------------------ cost
$text .= "\nCOST BUDGET: uncontended acquire + release against the recipe it replaces (phpredis SET NX PX + EVALSHA)\n";
$lock = Budget::lock($uncontended);
if ($lock === null) {
    $text .= "  (not measured: redislock and phpredis-evalsha need the uncontended suite)\n";
} else {
    $rows = [
        ['time per cycle (median of per-round ratios)', sprintf('%.1f us', $lock['us']), sprintf('%.1f us', $lock['us_recipe']),
            sprintf('%.3f', $lock['time_ratio']), '<= 1.00', $verdict($lock['time_ratio'] <= 1.0)],
        ['Redis commands per cycle', Table::num($lock['cmds'], 2), Table::num($lock['cmds_recipe'], 2),
            sprintf('+%.2f', $lock['cmds'] - $lock['cmds_recipe']), '<= +1', $verdict($lock['cmds'] <= $lock['cmds_recipe'] + 1.005)],
        ['Redis CPU per cycle', sprintf('%.2f us', $lock['cpu']), sprintf('%.2f us', $lock['cpu_recipe']),
            sprintf('%.3f', $lock['cpu_ratio']), '<= 1.05', $verdict($lock['cpu_ratio'] <= 1.05)],
        ['PHP CPU per cycle', sprintf('%.2f us', $lock['php_cpu']), sprintf('%.2f us', $lock['php_cpu_recipe']), '', '', ''],
    ];
    $text .= Table::render(['', "redislock\n", "recipe\n", "ratio\n", "target\n", "\n"], $rows, 'lrrrrl');
    $text .= sprintf("  per-round time ratios (%d rounds, each round runs both, order rotating): %s\n", count($lock['time']), $ratios($lock['time']));
}

// ------------------------------------------------------- primitives cost
$text .= "\nPRIMITIVES COST BUDGET: an uncontended read hold and permit cycle against the lock's (redislock)\n";
$rows = [];
foreach (['redislock-read' => 'read hold', 'redislock-permit' => 'permit (of 4)'] as $name => $label) {
    $p = Budget::primitive($uncontended, $name);
    $rows[] = $p === null ? [$label, '(not measured)', '', '', '', '', ''] : [
        $label, Table::num($p['cmds'], 2), '<= 8', $verdict($p['cmds'] <= 8.005), sprintf('%.2f us', $p['cpu']),
        sprintf('%.3f (%s)', $p['cpu_ratio'], $ratios($p['cpu_ratios'])), $verdict($p['cpu_ratio'] <= 1.25),
    ];
}
$text .= Table::render(['', "commands\n/cycle", "target\n", "\n", "Redis CPU\n/cycle", "CPU ratio to the lock's\n(median; per round)", "<= 1.25\n"],
    $rows, 'lrrlrrl');

// ------------------------------------------------------------- contended
$peers = Budget::peers();
$text .= "\nCONTENDED BUDGET: redislock against the best peer of each repetition (peers: " . implode(', ', $peers) . ")\n";
$rows = [];
foreach ($meta['outside_us'] ?? [0, 1000] as $outside) {
    $c = Budget::contended($contended, (int) $outside, $peers);
    $label = sprintf('%g ms outside', $outside / 1000);
    if ($c === null) {
        $rows[] = [$label, '(not measured)', '', '', '', ''];
        continue;
    }
    $target = Budget::rateTarget((int) $outside);
    $rows[] = [
        $label,
        $ratios($c['rates']) . sprintf('  (min %.2f; target >= %.2f)', min($c['rates']), $target),
        $verdict(min($c['rates']) >= $target),
        $ratios($c['p99s']) . sprintf('  (max %.2f)', max($c['p99s'])),
        $verdict(max($c['p99s']) <= 0.10),
        sprintf('%.1f', $c['longest_ms']),
    ];
}
$text .= Table::render(['workload', "CS/s / best peer's, per repetition\n(target in each)", "\n",
    "p99 wait / that peer's, per repetition\n(target <= 0.10)", "\n", "redislock longest\nwait, ms"], $rows, 'llllll');

// ----------------------------------------------------------------- floor
$text .= "\nHAND-OVER FLOOR: redislock's hand-over p50 (back to back) against a token passed between two processes\n"
    . "through the same Redis (bench/floor/token_pass.c: LPUSH / BLPOP, one round trip per pass), per repetition\n";
$f = Budget::floor($contended, $floors ?? []);
if ($f === null) {
    $text .= "  (not measured: needs redislock in the contended suite and a C compiler for the floor)\n";
} else {
    $us = fn (array $list) => implode(' ', array_map(fn ($x) => sprintf('%.1f', $x), $list));
    $text .= sprintf("  redislock p50 us: %s; floor p50 us: %s\n", $us($f['ours_us']), $us($f['floor_us']));
    $text .= sprintf("  ratio: %s  (max %.2f; target <= %.2f)  %s\n", $ratios($f['ratios']), max($f['ratios']),
        Budget::FLOOR_RATIO, $verdict(max($f['ratios']) <= Budget::FLOOR_RATIO));
}

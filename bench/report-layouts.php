<?php

declare(strict_types=1);

/*
 * The cost budget in every CPU layout: one table, a row per target and a
 * column per layout (scripts/bench.sh with BENCH_PIN=all runs the main and
 * primitives suites once per layout, then this).
 *
 *   php bench/report-layouts.php --out=bench/results --name=layouts \
 *       --layouts=same:bench/results/raw-layouts-same,split:...,0:...
 *
 * Writes <out>/<name>.txt (the same text as stdout). The figures and their
 * targets come from bench/lib/Budget.php, as in each layout's own report.
 */

require __DIR__ . '/lib/bootstrap.php';
require __DIR__ . '/lib/Table.php';
require __DIR__ . '/lib/Budget.php';

$opt = cli_options(['out' => null, 'name' => 'layouts', 'layouts' => null]);
$readJsonl = fn (string $file) => is_file($file) ? array_values(array_filter(array_map(
    fn ($l) => json_decode($l, true), file($file, FILE_IGNORE_NEW_LINES | FILE_SKIP_EMPTY_LINES) ?: []))) : [];

$columns = [];
foreach (explode(',', (string) $opt['layouts']) as $spec) {
    [$layout, $raw] = explode(':', $spec, 2) + [1 => ''];
    $columns[$layout] = [
        'meta' => json_decode((string) @file_get_contents("$raw/meta.json"), true) ?: [],
        'uncontended' => $readJsonl("$raw/uncontended.jsonl"),
        'contended' => $readJsonl("$raw/contended.jsonl"),
        'floor' => $readJsonl("$raw/floor.jsonl"),
        'primitives' => $readJsonl("$raw/primitives.jsonl"),
    ];
}

$cell = fn (?float $value, string $format, bool $met) => $value === null || is_nan($value)
    ? '-' : sprintf($format, $value) . ($met ? '' : ' *');
$rows = [];
$add = function (string $label, string $target, callable $figure) use (&$rows, $columns): void {
    $row = [$label, $target];
    foreach ($columns as $c) {
        $row[] = $figure($c);
    }
    $rows[] = $row;
};

$add('lock: time per cycle / recipe (median of rounds)', '<= 1.00', function ($c) use ($cell) {
    $l = Budget::lock($c['uncontended']);
    return $cell($l['time_ratio'] ?? null, '%.3f', ($l['time_ratio'] ?? INF) <= 1.0);
});
$add('lock: Redis CPU per cycle / recipe', '<= 1.05', function ($c) use ($cell) {
    $l = Budget::lock($c['uncontended']);
    return $cell($l['cpu_ratio'] ?? null, '%.3f', ($l['cpu_ratio'] ?? INF) <= 1.05);
});
$add('lock: commands per cycle - recipe', '<= +1', function ($c) use ($cell) {
    $l = Budget::lock($c['uncontended']);
    $d = $l === null ? null : $l['cmds'] - $l['cmds_recipe'];
    return $cell($d, '%+.2f', ($d ?? INF) <= 1.005);
});
foreach (['redislock-read' => 'read hold', 'redislock-permit' => 'permit'] as $name => $label) {
    $add("$label: commands per cycle", '<= 8', function ($c) use ($cell, $name) {
        $p = Budget::primitive($c['uncontended'], $name);
        return $cell($p['cmds'] ?? null, '%.2f', ($p['cmds'] ?? INF) <= 8.005);
    });
    $add("$label: Redis CPU per cycle / the lock's", '<= 1.25', function ($c) use ($cell, $name) {
        $p = Budget::primitive($c['uncontended'], $name);
        return $cell($p['cpu_ratio'] ?? null, '%.3f', ($p['cpu_ratio'] ?? INF) <= 1.25);
    });
}
$peers = Budget::peers();
foreach ([0, 1000] as $outside) {
    $what = $outside === 0 ? 'back to back' : sprintf('%g ms outside', $outside / 1000);
    $target = Budget::rateTarget($outside);
    $add("contended, $what: CS/s / best peer (lowest rep)", sprintf('>= %.2f', $target), function ($c) use ($cell, $outside, $peers, $target) {
        $r = Budget::contended($c['contended'], $outside, $peers);
        return $cell($r === null ? null : min($r['rates']), '%.2f', $r !== null && min($r['rates']) >= $target);
    });
    $add("contended, $what: p99 wait / that peer's (highest rep)", '<= 0.10', function ($c) use ($cell, $outside, $peers) {
        $r = Budget::contended($c['contended'], $outside, $peers);
        return $cell($r === null ? null : max($r['p99s']), '%.2f', $r !== null && max($r['p99s']) <= 0.10);
    });
}
$add('hand-over p50 / the floor\'s (highest rep)', sprintf('<= %.2f', Budget::FLOOR_RATIO), function ($c) use ($cell) {
    $f = Budget::floor($c['contended'], $c['floor']);
    return $cell($f === null ? null : max($f['ratios']), '%.2f', $f !== null && max($f['ratios']) <= Budget::FLOOR_RATIO);
});
$add('contended semaphore: commands per section', '<= 15', function ($c) use ($cell) {
    $n = Budget::semaphoreCommands($c['primitives']);
    return $cell($n, '%.1f', ($n ?? INF) <= 15.0);
});

$first = reset($columns) ?: ['meta' => []];
$text = sprintf("COST BUDGET IN EVERY CPU LAYOUT (redislock %s, %s, %d repetitions per layout)\n",
    $first['meta']['redislock'] ?? '?', $first['meta']['redis_server'] ?? '?', (int) ($first['meta']['reps'] ?? 0));
$names = ['same' => "same\n(all on CPU 1)", 'split' => "split\n(Redis CPU 0, PHP 1)", '0' => "0\n(no pinning)"];
$text .= Table::render(array_merge(['', "target\n"], array_map(fn ($l) => $names[$l] ?? $l, array_keys($columns))),
    $rows, 'll' . str_repeat('r', count($columns)));
$text .= "  * not met. Each layout's own report (tables, command mix, what bounds it) is bench/results/<name>-<layout>.txt.\n";

echo $text;
@mkdir($opt['out'], 0777, true);
file_put_contents($opt['out'] . '/' . $opt['name'] . '.txt', $text);

<?php

declare(strict_types=1);

/*
 * The primitives suite's part of the report (bench/primitives.php wrote the
 * raw results). Included by bench/report.php, in its scope: it appends to
 * $text and $problems and uses report.php's $raw, $readJsonl, $group, $med
 * and $mix.
 *
 * A semaphore that let more than N holders in at once, a write that met
 * another section, a lost write, a time-out or a failed release is a
 * problem (the run exits 1); so is a control that shows none of these (the
 * checker would be broken) and a contender that produced no numbers. A
 * contender skipped because it cannot run here is reported, not a problem.
 */

if (!is_file("$raw/primitives-meta.json")) {
    return;
}
$pmeta = json_decode((string) file_get_contents("$raw/primitives-meta.json"), true) ?: [];
$pruns = is_file("$raw/primitives.jsonl") ? $readJsonl('primitives.jsonl') : [];

$text .= "\n" . str_repeat('=', 100) . "\nPRIMITIVES SUITE: a semaphore and a read/write lock, redislock against Symfony's and Laravel's\n";
$text .= sprintf("Symfony Semaphore %s | pinning: %s | load average at start %s | %d repetition(s)%s, medians\n",
    $pmeta['symfony_semaphore'] ?? '?', $pmeta['pinning'] ?? '?', $pmeta['loadavg'] ?? '?', $pmeta['reps'] ?? 0,
    !empty($pmeta['quick']) ? ', QUICK run (short, noisier)' : '');
$text .= sprintf("Every section: %d us inside (usleep), %d us of other work after; waits are capped at %d s (Symfony Lock's acquire(true) has no cap).\n",
    $pmeta['hold-us'] ?? 0, $pmeta['outside-us'] ?? 0, $pmeta['wait'] ?? 0);

/**
 * redislock against the best peer of each repetition (the peer with the
 * most sections/s in it; bridges and the control are not peers): the
 * median over the repetitions of the sections/s ratio and the p99 wait ratio.
 */
$bestPeerLine = function (string $workload, array $ok) use (&$text): void {
    $byRep = [];
    foreach ($ok as $r) {
        $byRep[(int) $r['rep']][$r['contender']] = $r;
    }
    $rate = $p99 = $names = [];
    foreach ($byRep as $runs) {
        $ours = $runs['redislock'] ?? null;
        $peers = array_filter($runs, fn ($r) => primitive_contenders()[$r['contender']]['peer'] ?? false);
        if ($ours === null || $peers === []) {
            continue;
        }
        usort($peers, fn ($a, $b) => $b['sections_per_s'] <=> $a['sections_per_s']);
        $best = $peers[0];
        $names[] = primitive_label($best['contender'], $workload);
        $rate[] = $ours['sections_per_s'] / $best['sections_per_s'];
        if ($ours['wait_p99_ms'] > 0) {
            $p99[] = $best['wait_p99_ms'] / $ours['wait_p99_ms'];
        }
    }
    if ($rate === []) {
        $text .= "  redislock against the best peer: not measured (needs redislock and a peer)\n";
        return;
    }
    $counts = array_count_values($names);
    arsort($counts);
    $list = fn (array $xs) => implode(' ', array_map(fn ($x) => sprintf('%.2f', $x), $xs)) ?: '-';
    $text .= sprintf("  redislock against the best peer of each repetition (%s): sections/s x%.2f, p99 wait x%s\n"
        . "    (medians over the repetitions; per repetition, sections/s: %s; p99 wait: %s)\n",
        implode(', ', array_map(fn ($n, $c) => "$n in $c/" . count($rate), array_keys($counts), $counts)),
        Stats::median($rate), $p99 ? sprintf('%.2f', Stats::median($p99)) : '-', $list($rate), $list($p99));
};

foreach (PRIMITIVE_WORKLOADS as $workload) {
    $runs = array_values(array_filter($pruns, fn ($r) => $r['workload'] === $workload));
    $procs = $pmeta['procs'][$workload] ?? 0;
    if ($workload === 'semaphore') {
        $text .= sprintf("\nSEMAPHORE: %d permits, %d processes x %d sections on one name (each section holds a permit)\n",
            $pmeta['permits'] ?? 0, $procs, $pmeta['sections'] ?? 0);
        $text .= "  redislock: new RedisLock\\Semaphore(\$name, 4, 10.0, \$url) + acquire(10.0) / release(); Symfony: createSemaphore(\$name, 4, 1, 10.0)\n";
        $text .= "  + acquire() in a loop with usleep(100 +- 10 ms) (Symfony's Semaphore cannot block); Laravel: funnel(\$name)->limit(4)->block(10)->then(...)\n";
    } else {
        $text .= sprintf("\nREAD/WRITE: %d processes x %d sections on one key, %s %% writes (seeded: the same sequence for every contender)\n",
            $procs, $pmeta['sections'] ?? 0, $pmeta['write-pct'] ?? '?');
        $text .= "  redislock: new RedisLock(\$key, 10.0, \$url) + acquireRead(10.0) / acquire(10.0), release(); Symfony: createLock(\$key, 10)\n";
        $text .= "  + acquireRead(true) / acquire(true), release() (with its RedisStore, a loop of usleep(100 +- 10 ms))\n";
    }
    $rl = $group($runs, fn ($r) => $r['contender'] === 'redislock' && !isset($r['skipped']))[0];
    $rlRate = $med($rl, 'sections_per_s');
    $rlP99 = $med($rl, 'wait_p99_ms');
    $rows = $mixes = $skipped = [];
    $ok = [];
    foreach (primitive_contender_names($workload) as $name) {
        $label = primitive_label($name, $workload);
        [$good, $errors] = $group($runs, fn ($r) => $r['contender'] === $name);
        $skips = array_unique(array_column(array_filter($good, fn ($r) => isset($r['skipped'])), 'skipped'));
        $good = array_values(array_filter($good, fn ($r) => !isset($r['skipped'])));
        foreach ($skips as $why) {
            $skipped[] = "  $label: skipped, $why";
        }
        if (!$good && !$errors) {
            continue;
        }
        foreach ($errors as $e) {
            $problems[] = "primitives, $workload, $label: $e";
        }
        if (!$good) {
            $rows[] = array_merge([$label, 'FAILED'], array_fill(0, $workload === 'semaphore' ? 16 : 20, '-'));
            continue;
        }
        array_push($ok, ...$good);
        $control = !empty(primitive_contenders()[$name]['control']);
        $timeouts = array_sum(array_column($good, 'timeouts')) + array_sum(array_column($good, 'release_failures'));
        $missing = array_sum(array_map(fn ($r) => $r['expected'] - $r['done'], $good));
        $maxHolders = max(array_column($good, 'max_holders'));
        $maxHoldersLog = max(array_column($good, 'max_holders_log'));
        $rate = $med($good, 'sections_per_s');
        $p99 = $med($good, 'wait_p99_ms');
        $common = [
            $label,
            Table::num($rate),
            Table::pct(Stats::spread(array_column($good, 'sections_per_s'))),
            $control ? '-' : Table::ratio($rlRate, $rate, true),
            Table::pct($med($good, 'first_done_pct')),
        ];
        $costs = [
            Table::num($med($good, 'rt_per_section'), 2),
            Table::num($med($good, 'cmds_per_section'), 1),
            Table::num($med($good, 'redis_cpu_us_per_section'), 0),
            Table::num($med($good, 'cpu_us_per_section'), 0),
            (string) $timeouts,
        ];
        if ($workload === 'semaphore') {
            $permits = (int) ($pmeta['permits'] ?? 0);
            $exceeded = $maxHolders > $permits || $maxHoldersLog > $permits;
            if ($control) {
                $verdict = $exceeded ? 'exceeded (expected)' : 'CHECKER BROKEN';
                $exceeded || $problems[] = 'primitives, semaphore: the no-limit control never had more than N holders: the checker cannot be trusted';
            } else {
                $verdict = $exceeded ? "EXCEEDED $permits" : ($timeouts || $missing ? 'TIMEOUTS' : 'ok');
                if ($exceeded || $timeouts || $missing) {
                    $problems[] = sprintf('primitives, semaphore, %s: at most %d holders seen (counter) / %d (log) for %d permits, %d timeouts/failed releases, %d sections not done',
                        $label, $maxHolders, $maxHoldersLog, $permits, $timeouts, $missing);
                }
            }
            $rows[] = array_merge($common, [
                Table::sig($med($good, 'wait_p50_ms')),
                Table::sig($p99),
                Table::sig($med($good, 'wait_max_ms')),
                $control ? '-' : Table::ratio($rlP99, $p99, false),
                (string) $maxHolders,
                (string) $maxHoldersLog,
            ], $costs, [$verdict]);
        } else {
            $violations = array_sum(array_column($good, 'rw_violations'));
            $overlaps = array_sum(array_column($good, 'write_overlaps_log'));
            $lost = array_sum(array_map(fn ($r) => $r['writes'] - $r['write_counter'], $good));
            $broken = $violations > 0 || $overlaps > 0 || $lost !== 0;
            if ($control) {
                $verdict = $broken ? 'violated (expected)' : 'CHECKER BROKEN';
                $broken || $problems[] = 'primitives, rw: the no-lock control shows no write overlap: the checker cannot be trusted';
            } else {
                $verdict = $broken ? 'VIOLATED' : ($timeouts || $missing ? 'TIMEOUTS' : 'ok');
                if ($broken || $timeouts || $missing) {
                    $problems[] = sprintf('primitives, rw, %s: %d entries met a writer (counter), %d writes overlapped (log), %d lost writes, %d timeouts/failed releases, %d sections not done',
                        $label, $violations, $overlaps, $lost, $timeouts, $missing);
                }
            }
            $rows[] = array_merge($common, [
                Table::sig($med($good, 'read_wait_p50_ms')),
                Table::sig($med($good, 'read_wait_p99_ms')),
                Table::sig($med($good, 'write_wait_p50_ms')),
                Table::sig($med($good, 'write_wait_p99_ms')),
                Table::sig($med($good, 'wait_p99_ms')),
                Table::sig($med($good, 'wait_max_ms')),
                $control ? '-' : Table::ratio($rlP99, $p99, false),
                (string) $maxHolders,
                (string) $violations,
                (string) $overlaps,
                $lost === 0 ? 'ok' : "-$lost",
            ], $costs, [$verdict]);
        }
        $mixes[] = sprintf('  %-42s %s', $label, $mix($good, 'calls_per_section'));
    }
    if (!$rows) {
        $problems[] = "primitives, $workload: no results (did bench/primitives.php fail?)";
    }
    if ($workload === 'semaphore') {
        $text .= Table::render(['contender', "sections/s\n", "spread\n", "x sect.\n/s", "first\ndone", "wait ms\np50", "\np99", "\nmax", "x wait\np99",
            "max holders\ncounter", "\nlog", "round trips\n/section", "commands\n/section", "Redis CPU\nus/section", "PHP CPU\nus/section", "time-\nouts", "limit\n"],
            $rows, 'lrrrrrrrrrrrrrrrl');
    } else {
        $text .= Table::render(['contender', "sections/s\n", "spread\n", "x sect.\n/s", "first\ndone", "read wait ms\np50", "\np99", "write wait ms\np50", "\np99",
            "all waits ms\np99", "\nmax", "x wait\np99", "max\nreaders", "met a writer\ncounter", "write overl.\nlog", "writes\nlost",
            "round trips\n/section", "commands\n/section", "Redis CPU\nus/section", "PHP CPU\nus/section", "time-\nouts", "read/write\nrule"],
            $rows, 'lrrrrrrrrrrrrrrrrrrrrl');
    }
    $bestPeerLine($workload, $ok);
    $text .= implode("\n", $skipped) . ($skipped ? "\n" : '');
    $text .= "Command mix per section (INFO commandstats, includes commands inside scripts):\n" . implode("\n", $mixes) . "\n";
}
$text .= <<<TXT

  sections/s: sections of all processes / (last process's end - common start time). spread: (max - min) / median over the repetitions.
  first done: when the first process had done all its sections, in % of the run (fairness: waiters served in order all finish
    near the end, ~100 %; a lock that the releaser can take again while others wait lets a few processes finish early).
  wait: per section, from the call (funnel()->then(), acquire...) to entering the section; includes every retry and sleep.
  max holders / max readers, counter: the most sections inside at once, counted exactly under flock(2) on entry (maximum over the
    repetitions); log: the same from the merged hrtime intervals (an independent check; the intervals lie inside the hold).
    A semaphore's limit holds when both are <= N; the no-limit control must exceed N.
  met a writer, counter: entries that found a writer inside, or writes that found anyone inside (summed over repetitions);
    write overl., log: writes whose interval meets another section's; writes lost: a counter incremented by every write without
    other protection must equal the number of writes. The read/write rule holds when all three are 0 / ok.
  round trips / commands / Redis CPU: INFO total_reads_processed / total_commands_processed / used_cpu_sys + used_cpu_user per
    section (polling included, our INFO calls subtracted); PHP CPU: user + system time of all PHP processes per section. time-outs: waits that ran out, plus failed releases.

TXT;

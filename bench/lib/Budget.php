<?php

declare(strict_types=1);

/**
 * The cost budget of issue 28, computed from one run's raw results: the
 * figures behind bench/report-budget.php (one layout, in detail) and
 * bench/report-layouts.php (a column per CPU layout). Each figure comes
 * with its target, so both reports judge it the same way.
 */
final class Budget
{
    /** CS/s against the best peer, back to back (no work outside). */
    public const RATE_BACK_TO_BACK = 1.0;
    /** CS/s against the best peer, 1 ms of work outside the lock. */
    public const RATE_OUTSIDE = 1.5;

    /** The records of $contender, by repetition (errors left out). */
    public static function byRep(array $runs, string $contender, ?int $outside = null): array
    {
        $out = [];
        foreach ($runs as $r) {
            if (($r['contender'] ?? null) === $contender && !isset($r['error']) && !isset($r['skipped'])
                && ($outside === null || (int) $r['outside_us'] === $outside)) {
                $out[(int) $r['rep']] = $r;
            }
        }
        return $out;
    }

    /**
     * The lock's uncontended cycle against the recipe (phpredis SET NX PX +
     * EVALSHA), round by round; null when either was not measured.
     *
     * @return array{time: list<float>, time_ratio: float, us: float, us_recipe: float, cmds: float,
     *   cmds_recipe: float, cpu: float, cpu_recipe: float, cpu_ratio: float, php_cpu: float, php_cpu_recipe: float}|null
     */
    public static function lock(array $uncontended): ?array
    {
        $ours = self::byRep($uncontended, 'redislock');
        $recipe = self::byRep($uncontended, 'phpredis-evalsha');
        $reps = array_keys(array_intersect_key($ours, $recipe));
        sort($reps);
        if ($reps === []) {
            return null;
        }
        $med = fn (array $runs, string $field) => Stats::median(array_map(fn ($rep) => $runs[$rep][$field] ?? 0, $reps));
        $time = array_map(fn ($rep) => $ours[$rep]['us_per_cycle'] / $recipe[$rep]['us_per_cycle'], $reps);
        $cpu = $med($ours, 'redis_cpu_us_per_cycle');
        $cpuRecipe = $med($recipe, 'redis_cpu_us_per_cycle');
        return [
            'time' => $time,
            'time_ratio' => Stats::median($time),
            'us' => $med($ours, 'us_per_cycle'),
            'us_recipe' => $med($recipe, 'us_per_cycle'),
            'cmds' => $med($ours, 'cmds_per_cycle'),
            'cmds_recipe' => $med($recipe, 'cmds_per_cycle'),
            'cpu' => $cpu,
            'cpu_recipe' => $cpuRecipe,
            'cpu_ratio' => $cpuRecipe > 0 ? $cpu / $cpuRecipe : NAN,
            'php_cpu' => $med($ours, 'cpu_us_per_cycle'),
            'php_cpu_recipe' => $med($recipe, 'cpu_us_per_cycle'),
        ];
    }

    /**
     * An uncontended read hold or permit cycle (contender $name) against
     * the lock's, round by round; null when not measured.
     *
     * @return array{cmds: float, cpu: float, cpu_ratios: list<float>, cpu_ratio: float}|null
     */
    public static function primitive(array $uncontended, string $name): ?array
    {
        $lock = self::byRep($uncontended, 'redislock');
        $mine = self::byRep($uncontended, $name);
        $reps = array_keys(array_intersect_key($mine, $lock));
        sort($reps);
        if ($reps === []) {
            return null;
        }
        $ratios = array_map(fn ($rep) => ($mine[$rep]['redis_cpu_us_per_cycle'] ?? 0)
            / max(1e-9, $lock[$rep]['redis_cpu_us_per_cycle'] ?? 0), $reps);
        return [
            'cmds' => Stats::median(array_map(fn ($rep) => $mine[$rep]['cmds_per_cycle'], $reps)),
            'cpu' => Stats::median(array_map(fn ($rep) => $mine[$rep]['redis_cpu_us_per_cycle'] ?? 0, $reps)),
            'cpu_ratios' => $ratios,
            'cpu_ratio' => Stats::median($ratios),
        ];
    }

    /**
     * redislock against the best peer of each repetition (most CS/s) with
     * $outside µs of work outside the lock; null when not measured.
     *
     * @param  list<string>  $peers
     * @return array{rates: list<float>, p99s: list<float>, longest_ms: float}|null
     */
    public static function contended(array $contended, int $outside, array $peers): ?array
    {
        $rates = $p99s = [];
        $longest = 0.0;
        foreach (self::byRep($contended, 'redislock', $outside) as $rep => $r) {
            $best = null;
            foreach ($peers as $peer) {
                $p = self::byRep($contended, $peer, $outside)[$rep] ?? null;
                if ($p !== null && ($best === null || $p['cs_per_s'] > $best['cs_per_s'])) {
                    $best = $p;
                }
            }
            if ($best === null) {
                continue;
            }
            $rates[] = $r['cs_per_s'] / $best['cs_per_s'];
            $p99s[] = $best['wait_p99_ms'] > 0 ? $r['wait_p99_ms'] / $best['wait_p99_ms'] : NAN;
            $longest = max($longest, (float) $r['wait_max_ms']);
        }
        return $rates === [] ? null : ['rates' => $rates, 'p99s' => $p99s, 'longest_ms' => $longest];
    }

    /** The target CS/s ratio with $outside µs of work outside the lock. */
    public static function rateTarget(int $outside): float
    {
        return $outside > 0 ? self::RATE_OUTSIDE : self::RATE_BACK_TO_BACK;
    }

    /** The contended peers: every contended contender but ours and the control. */
    public static function peers(): array
    {
        return array_values(array_filter(array_keys(contenders()), fn ($n) => in_array('contended', contenders()[$n]['suites'], true)
            && $n !== 'nolock' && !str_contains($n, 'redislock')));
    }

    /** redislock's hand-over p50 against the floor's (target). */
    public const FLOOR_RATIO = 1.5;

    /**
     * redislock's hand-over p50 (back to back) against the floor's of the
     * same repetition (bench/floor/token_pass.c: a token passed between two
     * processes through the same Redis, LPUSH / BLPOP, one round trip per
     * pass), per repetition; null when either was not measured.
     *
     * @return array{ratios: list<float>, ours_us: list<float>, floor_us: list<float>}|null
     */
    public static function floor(array $contended, array $floors): ?array
    {
        $byRep = [];
        foreach ($floors as $f) {
            if (!isset($f['error']) && isset($f['p50_us'])) {
                $byRep[(int) $f['rep']] = (float) $f['p50_us'];
            }
        }
        $out = ['ratios' => [], 'ours_us' => [], 'floor_us' => []];
        foreach (self::byRep($contended, 'redislock', 0) as $rep => $r) {
            if (isset($byRep[$rep]) && $byRep[$rep] > 0 && isset($r['handoff_p50_us'])) {
                $out['ratios'][] = $r['handoff_p50_us'] / $byRep[$rep];
                $out['ours_us'][] = (float) $r['handoff_p50_us'];
                $out['floor_us'][] = $byRep[$rep];
            }
        }
        return $out['ratios'] === [] ? null : $out;
    }

    /** Commands per section of redislock's contended semaphore (median); null when not measured. */
    public static function semaphoreCommands(array $primitives): ?float
    {
        $runs = array_filter($primitives, fn ($r) => ($r['workload'] ?? '') === 'semaphore'
            && ($r['contender'] ?? '') === 'redislock' && !isset($r['error']) && !isset($r['skipped']));
        return $runs === [] ? null : Stats::median(array_column($runs, 'cmds_per_section'));
    }
}

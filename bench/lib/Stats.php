<?php

declare(strict_types=1);

/** Order statistics. Percentiles use the nearest-rank method on sorted data. */
final class Stats
{
    public static function median(array $values): ?float
    {
        $values = array_values(array_filter($values, fn ($v) => $v !== null));
        if ($values === []) {
            return null;
        }
        sort($values);
        $n = count($values);
        $mid = intdiv($n, 2);
        return $n % 2 ? (float) $values[$mid] : ($values[$mid - 1] + $values[$mid]) / 2;
    }

    /** $p in [0, 100]; $sorted ascending. */
    public static function percentile(array $sorted, float $p): ?float
    {
        $n = count($sorted);
        if ($n === 0) {
            return null;
        }
        $rank = (int) ceil($p / 100 * $n);
        return (float) $sorted[max(0, min($n - 1, $rank - 1))];
    }

    /** (max - min) / median, in percent: how much the repetitions disagree. */
    public static function spread(array $values): ?float
    {
        $values = array_values(array_filter($values, fn ($v) => $v !== null));
        $median = self::median($values);
        if ($median === null || $median == 0 || count($values) < 2) {
            return null;
        }
        return (max($values) - min($values)) / $median * 100;
    }
}

<?php

declare(strict_types=1);

/**
 * Analyses the merged log of critical sections of all processes.
 *
 * A record is [pid, t_call, t_enter, t_exit] in hrtime(true) nanoseconds
 * (CLOCK_MONOTONIC, comparable across processes): t_call just before the
 * blocking acquire, t_enter just after it returned, t_exit just before the
 * release.
 */
final class Intervals
{
    public static function analyze(array $records): array
    {
        usort($records, fn ($a, $b) => $a[2] <=> $b[2]);
        $n = count($records);

        // Mutual exclusion: an interval must not start before every earlier one ended.
        $overlaps = 0;
        $maxExit = PHP_INT_MIN;
        foreach ($records as [, , $enter, $exit]) {
            if ($enter < $maxExit) {
                $overlaps++;
            }
            $maxExit = max($maxExit, $exit);
        }

        // Handoffs: exit of one holder -> entry of the next, counted only when
        // somebody was waiting at the exit (a gap with no waiter is an idle lock).
        $calls = array_column($records, 1);
        sort($calls);
        $enters = array_column($records, 2); // already sorted
        $handoffs = [];
        $sameHolder = 0;
        for ($i = 0; $i + 1 < $n; $i++) {
            [$pid, , , $exit] = $records[$i];
            [$nextPid, , $nextEnter] = $records[$i + 1];
            if ($nextEnter < $exit) {
                continue; // an overlap, counted above
            }
            $waiting = self::countAtMost($calls, $exit) - self::countAtMost($enters, $exit);
            if ($waiting <= 0) {
                continue;
            }
            $handoffs[] = $nextEnter - $exit;
            if ($nextPid === $pid) {
                $sameHolder++; // the releaser took it again although others were waiting
            }
        }
        sort($handoffs);

        $waits = array_map(fn ($r) => $r[2] - $r[1], $records);
        sort($waits);

        return [
            'sections' => $n,
            'overlaps' => $overlaps,
            'handoffs' => $handoffs, // ns, sorted
            'same_holder' => $sameHolder,
            'waits' => $waits,       // ns, sorted
        ];
    }

    /** Number of elements <= $x in the ascending array $sorted. */
    private static function countAtMost(array $sorted, int $x): int
    {
        $lo = 0;
        $hi = count($sorted);
        while ($lo < $hi) {
            $mid = ($lo + $hi) >> 1;
            if ($sorted[$mid] <= $x) {
                $lo = $mid + 1;
            } else {
                $hi = $mid;
            }
        }
        return $lo;
    }
}

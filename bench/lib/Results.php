<?php

declare(strict_types=1);

/**
 * Appends the JSON line a measured process printed to a raw results file;
 * a process that failed (or printed no JSON) is recorded as $base plus an
 * `error`, so the report can say what went wrong. Returns what it wrote.
 */
function record_result(string $path, array $base, int $rc, string $out): array
{
    $line = trim($out);
    $result = $rc === 0 ? json_decode($line, true) : null;
    if (!is_array($result)) {
        $result = $base + ['error' => $rc === 124 ? 'time limit exceeded' : "exit code $rc" . ($line !== '' ? ": $line" : '')];
    }
    file_put_contents($path, json_encode($result + $base) . "\n", FILE_APPEND);
    return $result + $base;
}

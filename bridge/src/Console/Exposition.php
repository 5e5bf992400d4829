<?php

declare(strict_types=1);

namespace RedisLock\Bridge\Console;

/**
 * Prometheus's text format (version 0.0.4), read back: what
 * `RedisLock::metrics()` returns, or a metrics route serves.
 *
 *     $exposition = Exposition::parse(\RedisLock::metrics());
 *     $exposition->value('redislock_acquires_total', ['primitive' => 'lock', 'result' => 'timeout']);
 *     $exposition->histograms('redislock_wait_seconds');   // by primitive: buckets, sum, count
 *     Exposition::quantile(0.99, $histogram['buckets']);   // as PromQL's histogram_quantile()
 *
 * Lines are `# HELP name text`, `# TYPE name type`, other `#` comments,
 * blank lines, and samples `name{label="value",...} value [timestamp]`
 * (label values with `\\`, `\"` and `\n` escapes; values as Go's
 * ParseFloat reads them, `+Inf`, `-Inf` and `NaN` included).
 */
final class Exposition
{
    /** @var array<string, string> the `# TYPE` of each family */
    private array $types = [];

    /** @var array<string, string> the `# HELP` of each family */
    private array $help = [];

    /** @var list<array{name: string, labels: array<string, string>, value: float}> */
    private array $samples = [];

    private function __construct()
    {
    }

    /**
     * Reads an exposition.
     *
     * @throws \UnexpectedValueException naming the line that is not of the format
     */
    public static function parse(string $text): self
    {
        $exposition = new self();
        foreach (preg_split('/\r?\n/', $text) ?: [] as $i => $line) {
            try {
                $exposition->line($line);
            } catch (\UnexpectedValueException $e) {
                throw new \UnexpectedValueException(sprintf('line %d of the exposition: %s', $i + 1, $e->getMessage()), 0, $e);
            }
        }

        return $exposition;
    }

    /** The `# TYPE` of a family (counter, gauge, histogram, summary, untyped), or null. */
    public function type(string $family): ?string
    {
        return $this->types[$family] ?? null;
    }

    /** The `# HELP` of a family, or null. */
    public function help(string $family): ?string
    {
        return $this->help[$family] ?? null;
    }

    /**
     * The samples, in the order of the text; with $name, only that name's.
     *
     * @return list<array{name: string, labels: array<string, string>, value: float}>
     */
    public function samples(?string $name = null): array
    {
        if ($name === null) {
            return $this->samples;
        }

        return array_values(array_filter($this->samples, static fn (array $s) => $s['name'] === $name));
    }

    /**
     * The value of the first sample of $name whose labels include $labels;
     * null when there is none.
     *
     * @param  array<string, string>  $labels
     */
    public function value(string $name, array $labels = []): ?float
    {
        foreach ($this->samples($name) as $sample) {
            if (array_intersect_assoc($labels, $sample['labels']) === $labels) {
                return $sample['value'];
            }
        }

        return null;
    }

    /**
     * The histograms of a family (`NAME_bucket`, `NAME_sum`, `NAME_count`),
     * one per value of the label $by (e.g. `primitive`), in the order they
     * first appear: buckets sorted by their bound (`le`, INF for `+Inf`),
     * with the cumulative counts as given.
     *
     * @return array<string, array{buckets: list<array{le: float, count: float}>, sum: float, count: float}>
     */
    public function histograms(string $family, string $by = 'primitive'): array
    {
        $histograms = [];
        foreach ($this->samples as $sample) {
            $part = match ($sample['name']) {
                $family . '_bucket' => 'bucket',
                $family . '_sum' => 'sum',
                $family . '_count' => 'count',
                default => null,
            };
            if ($part === null) {
                continue;
            }
            $key = $sample['labels'][$by] ?? '';
            $histograms[$key] ??= ['buckets' => [], 'sum' => 0.0, 'count' => 0.0];
            if ($part !== 'bucket') {
                $histograms[$key][$part] = $sample['value'];
                continue;
            }
            if (!isset($sample['labels']['le'])) {
                throw new \UnexpectedValueException(sprintf('a bucket of %s has no "le" label', $family));
            }
            $histograms[$key]['buckets'][] = ['le' => self::number($sample['labels']['le']), 'count' => $sample['value']];
        }
        foreach ($histograms as &$histogram) {
            usort($histogram['buckets'], static fn (array $a, array $b) => $a['le'] <=> $b['le']);
        }

        return $histograms;
    }

    /**
     * The $q quantile (0 to 1) of a histogram's cumulative buckets, as
     * PromQL's histogram_quantile() estimates it: linear within the
     * bucket the rank falls in (from 0 for the first bucket); in the
     * `+Inf` bucket, the highest finite bound. Null without observations.
     *
     * @param  list<array{le: float, count: float}>  $buckets  sorted, cumulative, the last one `+Inf`
     */
    public static function quantile(float $q, array $buckets): ?float
    {
        $total = $buckets === [] ? 0.0 : $buckets[array_key_last($buckets)]['count'];
        if (!($total > 0)) {
            return null;
        }
        $rank = max(0.0, min(1.0, $q)) * $total;
        $lower = 0.0;
        $below = 0.0;
        foreach ($buckets as $i => $bucket) {
            if ($bucket['count'] >= $rank && $bucket['count'] > $below) {
                if (is_infinite($bucket['le'])) {
                    return $i > 0 ? $buckets[$i - 1]['le'] : null;
                }

                return $lower + ($bucket['le'] - $lower) * ($rank - $below) / ($bucket['count'] - $below);
            }
            $lower = $bucket['le'];
            $below = $bucket['count'];
        }

        return $lower;
    }

    /** Reads one line. */
    private function line(string $line): void
    {
        $line = trim($line);
        if ($line === '') {
            return;
        }
        if ($line[0] === '#') {
            if (preg_match('/^#\s*(HELP|TYPE)\s+([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\s+(.*))?$/', $line, $m)) {
                $m[3] ??= '';
                if ($m[1] === 'TYPE') {
                    if (!in_array($m[3], ['counter', 'gauge', 'histogram', 'summary', 'untyped'], true)) {
                        throw new \UnexpectedValueException(sprintf('unknown type "%s" of %s', $m[3], $m[2]));
                    }
                    $this->types[$m[2]] = $m[3];
                } else {
                    $this->help[$m[2]] = strtr($m[3], ['\\\\' => '\\', '\\n' => "\n"]);
                }
            }

            return;  // a comment
        }
        if (!preg_match('/^([a-zA-Z_:][a-zA-Z0-9_:]*)\s*/', $line, $m)) {
            throw new \UnexpectedValueException(sprintf('not a sample: "%s"', self::shorten($line)));
        }
        $name = $m[1];
        $at = strlen($m[0]);
        $labels = [];
        if (($line[$at] ?? '') === '{') {
            $at++;
            // Possessive: a label value of any length is read without
            // backtracking (which PCRE bounds).
            while (preg_match('/\G\s*([a-zA-Z_][a-zA-Z0-9_]*)\s*=\s*"((?:[^"\\\\\n]++|\\\\.)*+)"\s*(,|(?=\}))/', $line, $m, 0, $at)) {
                $labels[$m[1]] = preg_replace_callback('/\\\\(.)/', static fn (array $e) => $e[1] === 'n' ? "\n" : $e[1], $m[2]);
                $at += strlen($m[0]);
            }
            if (!preg_match('/\G\s*\}\s*/', $line, $m, 0, $at)) {
                throw new \UnexpectedValueException(sprintf('malformed labels of %s: "%s"', $name, self::shorten($line)));
            }
            $at += strlen($m[0]);
        }
        $rest = preg_split('/\s+/', trim(substr($line, $at)));
        if ($rest === false || $rest[0] === '' || count($rest) > 2 || (isset($rest[1]) && !preg_match('/^-?\d+$/', $rest[1]))) {
            throw new \UnexpectedValueException(sprintf('malformed value of %s: "%s"', $name, self::shorten($line)));
        }
        if (str_ends_with($name, '_bucket')) {
            // A histogram's bucket: its bound read here, where the line is
            // known (histograms() reads it again).
            if (!isset($labels['le'])) {
                throw new \UnexpectedValueException(sprintf('a bucket of %s has no "le" label', substr($name, 0, -7)));
            }
            self::number($labels['le']);
        }
        $this->samples[] = ['name' => $name, 'labels' => $labels, 'value' => self::number($rest[0])];
    }

    /** A sample value or an `le` bound. */
    private static function number(string $text): float
    {
        $lower = strtolower($text);
        if (in_array($lower, ['+inf', 'inf'], true)) {
            return INF;
        }
        if ($lower === '-inf') {
            return -INF;
        }
        if ($lower === 'nan') {
            return NAN;
        }
        if (!is_numeric($text)) {
            throw new \UnexpectedValueException(sprintf('"%s" is not a number', self::shorten($text)));
        }

        return (float) $text;
    }

    private static function shorten(string $text): string
    {
        return strlen($text) > 80 ? substr($text, 0, 77) . '...' : $text;
    }
}

<?php

declare(strict_types=1);

namespace RedisLock\Bridge\Console;

/**
 * The wait-time histograms of an exposition (`redislock_wait_seconds`, by
 * primitive) as one standalone SVG a browser opens: a chart per primitive
 * that counted acquires (lock, read, permit), a bar per bucket (the
 * acquires whose wait fell in it: the difference of two cumulative
 * `le` counts), labelled axes, and the count, mean, p50 and p99 (p50 and
 * p99 estimated from the buckets as PromQL's histogram_quantile() does,
 * also drawn as dashed lines).
 *
 *     file_put_contents('waits.svg', WaitHistogramSvg::render(Exposition::parse(\RedisLock::metrics())));
 */
final class WaitHistogramSvg
{
    /** The histogram family drawn. */
    public const FAMILY = 'redislock_wait_seconds';

    private const WIDTH = 860;
    private const LEFT = 80;
    private const RIGHT = 30;
    private const HEADER = 70;
    private const PLOT_HEIGHT = 220;
    /** Panel: its title (40), the plot, the bucket labels and the axis title (80). */
    private const PANEL = 40 + self::PLOT_HEIGHT + 80;

    private const COLORS = ['lock' => '#4e79a7', 'read' => '#59a14f', 'permit' => '#f28e2b'];

    /** Primitives in this order first, then any other in the order of the text. */
    private const ORDER = ['lock', 'read', 'permit'];

    /**
     * The histograms drawn: those with acquires (count > 0), by primitive.
     *
     * @return array<string, array{buckets: list<array{le: float, count: float}>, sum: float, count: float}>
     */
    public static function histograms(Exposition $exposition): array
    {
        $all = $exposition->histograms(self::FAMILY);
        $drawn = [];
        foreach ([...self::ORDER, ...array_keys($all)] as $primitive) {
            $primitive = (string) $primitive;
            if (isset($all[$primitive]) && !isset($drawn[$primitive]) && self::total($all[$primitive]) > 0) {
                $drawn[$primitive] = $all[$primitive];
            }
        }

        return $drawn;
    }

    /**
     * The SVG document.
     *
     * @param  string  $source  what the figures are (shown under the title): a URL without its credentials, a file, ...
     */
    public static function render(Exposition $exposition, string $source = ''): string
    {
        $histograms = self::histograms($exposition);
        $height = self::HEADER + max(1, count($histograms)) * self::PANEL;
        $out = [sprintf(
            '<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %1$d %2$d" font-family="sans-serif" font-size="12">',
            self::WIDTH,
            $height,
        )];
        $out[] = sprintf('<rect width="%d" height="%d" fill="white"/>', self::WIDTH, $height);
        $out[] = sprintf('<text x="%d" y="26" font-size="17" font-weight="bold">redislock: wait until acquired, per primitive</text>', self::LEFT);
        $out[] = sprintf('<text x="%d" y="46" fill="#555">%s</text>', self::LEFT, self::escape(
            ($source === '' ? '' : $source . '; ') . 'successful acquires, from the call to its return (redislock_wait_seconds)',
        ));
        if ($histograms === []) {
            $out[] = sprintf('<text x="%d" y="%d" fill="#333">No acquire counted yet: every wait histogram is empty.</text>', self::LEFT, self::HEADER + 40);
        }
        $top = self::HEADER;
        foreach ($histograms as $primitive => $histogram) {
            array_push($out, ...self::panel((string) $primitive, $histogram, $top));
            $top += self::PANEL;
        }
        $out[] = '</svg>';

        return implode("\n", $out) . "\n";
    }

    /** Seconds in µs, ms or s, at most 3 significant digits. */
    public static function duration(?float $seconds): string
    {
        if ($seconds === null || is_nan($seconds)) {
            return 'n/a';
        }
        if (is_infinite($seconds)) {
            return '+Inf';
        }
        [$value, $unit] = match (true) {
            $seconds == 0.0 => [0.0, 's'],
            $seconds < 1e-3 => [$seconds * 1e6, 'µs'],
            $seconds < 1.0 => [$seconds * 1e3, 'ms'],
            default => [$seconds, 's'],
        };
        $text = sprintf('%.' . max(0, 2 - (int) floor(log10(max($value, 1)))) . 'f', $value);
        if (str_contains($text, '.')) {
            $text = rtrim(rtrim($text, '0'), '.');
        }

        return $text . ' ' . $unit;
    }

    /**
     * One chart.
     *
     * @param  array{buckets: list<array{le: float, count: float}>, sum: float, count: float}  $histogram
     * @return list<string>
     */
    private static function panel(string $primitive, array $histogram, int $top): array
    {
        $buckets = $histogram['buckets'];
        $total = self::total($histogram);
        $p50 = Exposition::quantile(0.5, $buckets);
        $p99 = Exposition::quantile(0.99, $buckets);
        $mean = $histogram['count'] > 0 ? $histogram['sum'] / $histogram['count'] : null;
        $out = [sprintf('<g class="panel" data-primitive="%s">', self::escape($primitive))];
        $out[] = sprintf(
            '<text x="%d" y="%d" font-size="14" font-weight="bold">%s: %s acquire%s; p50 ≈ %s, p99 ≈ %s, mean %s</text>',
            self::LEFT,
            $top + 24,
            self::escape($primitive),
            number_format($total),
            $total == 1 ? '' : 's',
            self::duration($p50),
            self::duration($p99),
            self::duration($mean),
        );
        $plotTop = $top + 40;
        $plotBottom = $plotTop + self::PLOT_HEIGHT;
        $plotWidth = self::WIDTH - self::LEFT - self::RIGHT;
        $out[] = sprintf('<rect x="%d" y="%d" width="%d" height="%d" fill="none" stroke="#999"/>', self::LEFT, $plotTop, $plotWidth, self::PLOT_HEIGHT);

        // The acquires in each bucket: differences of the cumulative counts.
        $counts = [];
        $below = 0.0;
        foreach ($buckets as $bucket) {
            $counts[] = max(0.0, $bucket['count'] - $below);
            $below = max($below, $bucket['count']);
        }
        $yMax = self::niceCeiling(1.1 * max([1.0, ...$counts]));  // some room above the tallest bar
        foreach ([0.0, 0.25, 0.5, 0.75, 1.0] as $step) {
            $y = $plotBottom - $step * self::PLOT_HEIGHT;
            $out[] = sprintf('<line x1="%d" y1="%.1f" x2="%d" y2="%.1f" stroke="%s"/>', self::LEFT, $y, self::LEFT + $plotWidth, $y, $step > 0 ? '#eee' : '#999');
            $out[] = sprintf('<text x="%d" y="%.1f" text-anchor="end">%s</text>', self::LEFT - 6, $y + 4, self::count($step * $yMax));
        }
        $out[] = sprintf(
            '<text x="%d" y="%.1f" text-anchor="middle" transform="rotate(-90 %1$d %2$.1f)" fill="#333">acquires</text>',
            self::LEFT - 52,
            $plotTop + self::PLOT_HEIGHT / 2,
        );

        $slot = $plotWidth / max(1, count($buckets));
        $color = self::COLORS[$primitive] ?? '#888';
        $lower = 0.0;
        foreach ($buckets as $i => $bucket) {
            $height = $counts[$i] / $yMax * self::PLOT_HEIGHT;
            $x = self::LEFT + $i * $slot;
            $label = is_infinite($bucket['le']) ? '> ' . self::duration($lower) : '≤ ' . self::duration($bucket['le']);
            $range = is_infinite($bucket['le'])
                ? 'over ' . self::duration($lower)
                : self::duration($lower) . ' to ' . self::duration($bucket['le']);
            $out[] = sprintf(
                '<rect class="bar" x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="%s"><title>%s: %s acquire%s</title></rect>',
                $x + $slot * 0.1,
                $plotBottom - $height,
                $slot * 0.8,
                $height,
                $color,
                self::escape($range),
                self::count($counts[$i]),
                $counts[$i] == 1 ? '' : 's',
            );
            $cx = $x + $slot / 2;
            $out[] = sprintf(
                '<text x="%.1f" y="%d" text-anchor="end" font-size="11" transform="rotate(-40 %1$.1f %2$d)">%s</text>',
                $cx,
                $plotBottom + 14,
                self::escape($label),
            );
            if (!is_infinite($bucket['le'])) {
                $lower = $bucket['le'];
            }
        }
        $out[] = sprintf(
            '<text x="%.1f" y="%d" text-anchor="middle" fill="#333">wait until acquired (each bar: the acquires whose wait fell in that bucket)</text>',
            self::LEFT + $plotWidth / 2,
            $plotBottom + 72,
        );
        foreach (['p50' => $p50, 'p99' => $p99] as $name => $value) {
            $x = self::position($value, $buckets, $slot);
            if ($x === null) {
                continue;
            }
            $out[] = sprintf('<line class="quantile" x1="%.1f" y1="%d" x2="%1$.1f" y2="%d" stroke="#c00" stroke-dasharray="4 3"/>', $x, $plotTop, $plotBottom);
            $out[] = sprintf('<text x="%.1f" y="%d" fill="#c00" font-size="11">%s</text>', $x + 3, $plotTop + ($name === 'p50' ? 14 : 28), $name);
        }
        $out[] = '</g>';

        return $out;
    }

    /**
     * Where $value falls on the x axis: its bucket's slot, linearly within it.
     *
     * @param  list<array{le: float, count: float}>  $buckets
     */
    private static function position(?float $value, array $buckets, float $slot): ?float
    {
        if ($value === null) {
            return null;
        }
        $lower = 0.0;
        foreach ($buckets as $i => $bucket) {
            if ($value <= $bucket['le']) {
                $fraction = is_infinite($bucket['le']) || $bucket['le'] <= $lower ? 0.0 : ($value - $lower) / ($bucket['le'] - $lower);

                return self::LEFT + ($i + $fraction) * $slot;
            }
            $lower = $bucket['le'];
        }

        return null;
    }

    /**
     * The acquires a histogram counted: its `+Inf` bucket, else its count.
     *
     * @param  array{buckets: list<array{le: float, count: float}>, sum: float, count: float}  $histogram
     */
    private static function total(array $histogram): float
    {
        $last = $histogram['buckets'] === [] ? null : $histogram['buckets'][array_key_last($histogram['buckets'])];

        return $last !== null && is_infinite($last['le']) ? $last['count'] : $histogram['count'];
    }

    /** 1, 2, 2.5 or 5 times a power of ten, at least $value. */
    private static function niceCeiling(float $value): float
    {
        $power = 10 ** floor(log10($value));
        foreach ([1, 2, 2.5, 5, 10] as $step) {
            if ($step * $power >= $value) {
                return $step * $power;
            }
        }

        return 10 * $power;
    }

    /** A count for an axis or a tooltip. */
    private static function count(float $count): string
    {
        return $count == floor($count) ? number_format($count) : rtrim(rtrim(number_format($count, 2), '0'), '.');
    }

    private static function escape(string $text): string
    {
        // XML 1.0 allows no control character but tab, newline and carriage
        // return (not even as a character reference): those go, and bytes
        // that are not UTF-8 become U+FFFD.
        $text = preg_replace('/[\x00-\x08\x0B\x0C\x0E-\x1F\x7F]/', '', $text) ?? '';

        return htmlspecialchars($text, ENT_XML1 | ENT_QUOTES | ENT_SUBSTITUTE, 'UTF-8');
    }
}

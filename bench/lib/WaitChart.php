<?php

declare(strict_types=1);

/**
 * SVG percentile plot of wait times, written by hand (no libraries).
 *
 * One panel per contended variant, one curve per contender. x: wait time,
 * log scale. y: percentile of acquires on a "nines" scale (0, 50, 90, 99,
 * 99.9 % equally spaced by -log10(1 - p)), so medians and tails are both
 * readable. A point (x, p) reads "p of the acquires waited at most x".
 */
final class WaitChart
{
    private const W = 1060;
    private const PANEL_H = 360;
    private const LEFT = 70;
    private const RIGHT = 310;
    private const TOP = 70;
    private const GAP = 80;
    private const COLORS = ['#d62728', '#1f77b4', '#2ca02c', '#9467bd', '#ff7f0e', '#8c564b', '#e377c2', '#17becf'];

    /**
     * @param list<array{title: string, series: array<string, list<float>>}> $panels
     *        series: label => wait times in microseconds (any order); the first series is drawn bold
     */
    public static function render(string $title, string $subtitle, array $panels): string
    {
        $all = [];
        foreach ($panels as $panel) {
            foreach ($panel['series'] as $waits) {
                foreach ($waits as $w) {
                    $all[] = $w;
                }
            }
        }
        $min = max(1.0, $all ? min(array_filter($all, fn ($w) => $w > 0) ?: [1.0]) : 1.0);
        $max = max(10.0, $all ? max($all) : 10.0);
        $xLo = floor(log10($min));
        $xHi = ceil(log10($max));
        if ($xHi <= $xLo) {
            $xHi = $xLo + 1;
        }

        $height = self::TOP + count($panels) * (self::PANEL_H + self::GAP) - 20;
        $svg = sprintf('<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" font-family="sans-serif" font-size="12">' . "\n",
            self::W, $height, self::W, $height);
        $svg .= sprintf('<rect width="%d" height="%d" fill="white"/>' . "\n", self::W, $height);
        $svg .= sprintf('<text x="%d" y="24" font-size="17" font-weight="bold">%s</text>' . "\n", self::LEFT, self::esc($title));
        $svg .= sprintf('<text x="%d" y="44" fill="#555">%s</text>' . "\n", self::LEFT, self::esc($subtitle));

        foreach (array_values($panels) as $i => $panel) {
            $top = self::TOP + $i * (self::PANEL_H + self::GAP) + 20;
            $svg .= self::panel($panel, $top, $xLo, $xHi);
        }
        return $svg . "</svg>\n";
    }

    private static function panel(array $panel, float $top, float $xLo, float $xHi): string
    {
        $plotW = self::W - self::LEFT - self::RIGHT;
        $plotH = self::PANEL_H - 40;
        $n = max(2, max(array_map('count', $panel['series']) ?: [2]));
        $yHi = min(4.0, ceil(log10($n) * 2) / 2); // nines shown, at most 99.99 %
        $x = fn (float $us) => self::LEFT + (log10(max($us, 10 ** $xLo)) - $xLo) / ($xHi - $xLo) * $plotW;
        $y = fn (float $nines) => $top + $plotH - min($nines, $yHi) / $yHi * $plotH;

        $s = sprintf('<text x="%d" y="%.1f" font-size="14" font-weight="bold">%s</text>' . "\n", self::LEFT, $top - 10, self::esc($panel['title']));
        $s .= sprintf('<rect x="%d" y="%.1f" width="%d" height="%d" fill="none" stroke="#999"/>' . "\n", self::LEFT, $top, $plotW, $plotH);

        // x grid: decades with 2x and 5x minor lines.
        for ($d = $xLo; $d <= $xHi; $d++) {
            foreach ([1, 2, 5] as $m) {
                $us = $m * 10 ** $d;
                if (log10($us) > $xHi + 1e-9) {
                    continue;
                }
                $px = $x($us);
                $major = $m === 1;
                $s .= sprintf('<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="%s"/>' . "\n",
                    $px, $top, $px, $top + $plotH, $major ? '#ccc' : '#eee');
                if ($major) {
                    $s .= sprintf('<text x="%.1f" y="%.1f" text-anchor="middle">%s</text>' . "\n", $px, $top + $plotH + 16, self::duration($us));
                }
            }
        }
        $s .= sprintf('<text x="%.1f" y="%.1f" text-anchor="middle" fill="#333">wait per acquire, from the call to entering the critical section (log scale)</text>' . "\n",
            self::LEFT + $plotW / 2, $top + $plotH + 34);

        // y grid: percentiles on the nines scale.
        foreach ([[0.0, 'p0'], [log10(2), 'p50'], [1.0, 'p90'], [2.0, 'p99'], [3.0, 'p99.9'], [4.0, 'p99.99']] as [$nines, $label]) {
            if ($nines > $yHi + 1e-9) {
                continue;
            }
            $py = $y($nines);
            $s .= sprintf('<line x1="%d" y1="%.1f" x2="%d" y2="%.1f" stroke="#ddd"/>' . "\n", self::LEFT, $py, self::LEFT + $plotW, $py);
            $s .= sprintf('<text x="%d" y="%.1f" text-anchor="end">%s</text>' . "\n", self::LEFT - 6, $py + 4, $label);
        }

        $i = 0;
        foreach ($panel['series'] as $label => $waits) {
            $color = self::COLORS[$i % count(self::COLORS)];
            $width = $i === 0 ? 3 : 1.6;
            sort($waits);
            $count = count($waits);
            if ($count > 0) {
                $points = [];
                $last = log10($count);
                for ($nines = 0.0; $nines < $last; $nines += 0.01) {
                    $idx = min($count - 1, (int) floor((1 - 10 ** -$nines) * $count));
                    $points[] = sprintf('%.1f,%.1f', $x($waits[$idx]), $y($nines));
                }
                $points[] = sprintf('%.1f,%.1f', $x($waits[$count - 1]), $y($last));
                $s .= sprintf('<polyline fill="none" stroke="%s" stroke-width="%s" stroke-linejoin="round" points="%s"/>' . "\n",
                    $color, $width, implode(' ', $points));
            }
            $ly = $top + 14 + $i * 20;
            $lx = self::LEFT + $plotW + 14;
            $s .= sprintf('<line x1="%d" y1="%.1f" x2="%d" y2="%.1f" stroke="%s" stroke-width="%s"/>' . "\n", $lx, $ly - 4, $lx + 22, $ly - 4, $color, $width);
            $s .= sprintf('<text x="%d" y="%.1f">%s (n=%d)</text>' . "\n", $lx + 28, $ly, self::esc($label), $count);
            $i++;
        }
        return $s;
    }

    private static function duration(float $us): string
    {
        return match (true) {
            $us >= 1e6 => ($us / 1e6) . ' s',
            $us >= 1e3 => ($us / 1e3) . ' ms',
            default => $us . ' µs',
        };
    }

    private static function esc(string $s): string
    {
        return htmlspecialchars($s, ENT_XML1 | ENT_QUOTES, 'UTF-8');
    }
}

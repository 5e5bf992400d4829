<?php

declare(strict_types=1);

/** Plain-text tables and the number formats the report uses. */
final class Table
{
    /**
     * @param list<string> $headers  a header may span two lines with "\n"
     * @param list<list<string>> $rows
     * @param string $align one letter per column: l or r
     */
    public static function render(array $headers, array $rows, string $align): string
    {
        $head = array_map(fn ($h) => explode("\n", $h) + [1 => ''], $headers);
        $widths = [];
        foreach ($headers as $i => $_) {
            $widths[$i] = max(mb_strlen($head[$i][0]), mb_strlen($head[$i][1]),
                ...array_map(fn ($r) => mb_strlen($r[$i]), $rows ?: [['']]));
        }
        $line = function (array $cells) use ($widths, $align): string {
            $out = [];
            foreach ($cells as $i => $cell) {
                $pad = str_repeat(' ', $widths[$i] - mb_strlen($cell));
                $out[] = $align[$i] === 'l' ? $cell . $pad : $pad . $cell;
            }
            return rtrim(implode('  ', $out));
        };
        $text = $line(array_column($head, 0)) . "\n";
        if (implode('', array_column($head, 1)) !== '') {
            $text .= $line(array_column($head, 1)) . "\n";
        }
        $text .= $line(array_map(fn ($w) => str_repeat('-', $w), $widths)) . "\n";
        foreach ($rows as $row) {
            $text .= $line($row) . "\n";
        }
        return $text;
    }

    public static function num(?float $v, int $decimals = 0): string
    {
        return $v === null ? '-' : number_format($v, $decimals, '.', ',');
    }

    /** Compact number: 3 significant digits, no exponent. */
    public static function sig(?float $v): string
    {
        if ($v === null) {
            return '-';
        }
        $abs = abs($v);
        $decimals = $abs >= 100 ? 0 : ($abs >= 10 ? 1 : ($abs >= 1 ? 2 : 3));
        return number_format($v, $decimals, '.', ',');
    }

    /**
     * How many times better redislock is than this contender: "x1.80" means
     * redislock is 1.8 times better, "x0.50" that it is 2 times worse.
     */
    public static function ratio(?float $redislock, ?float $other, bool $higherIsBetter): string
    {
        if ($redislock === null || $other === null || $redislock <= 0 || $other <= 0) {
            return '-';
        }
        $r = $higherIsBetter ? $redislock / $other : $other / $redislock;
        return 'x' . number_format($r, $r >= 10 ? 0 : 2);
    }

    public static function pct(?float $v): string
    {
        return $v === null ? '-' : sprintf('%.0f%%', $v);
    }
}

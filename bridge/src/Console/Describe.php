<?php

namespace RedisLock\Bridge\Console;

/**
 * Words for what `RedisLock::inspect()` returns: a block for `inspect`,
 * one line for `watch`; a server that can lose the lock by itself
 * (`unsafe`) is named with its reason. Owners are shown as the tokens Redis holds (an
 * owner label set with the option "owner" is a token too).
 */
final class Describe
{
    /**
     * The `inspect` block.
     *
     * @param  array<string, mixed>  $seen  what RedisLock::inspect() returned
     */
    public static function inspection(string $name, array $seen): string
    {
        $lines = ["lock \"$name\": " . self::state($seen)];
        if ($seen['held']) {
            $lines[] = '  owners:  ' . (implode(', ', $seen['owners']) ?: '(none listed)');
            $seen['mode'] === 'read' && $lines[] = '  readers: ' . $seen['readers'];
            $lines[] = '  ttl:     ' . self::seconds($seen['ttl']);
            $seen['fence'] !== null && $lines[] = '  fence:   ' . $seen['fence'];
        }
        $lines[] = '  waiting: ' . $seen['waiting'];
        $sem = $seen['semaphore'];
        if ($sem !== null) {
            $lines[] = sprintf('semaphore "%s": %d of %s permits held', $name, $sem['holders'], $sem['permits'] ?? '?');
            $sem['owners'] !== [] && $lines[] = '  owners:  ' . implode(', ', $sem['owners']);
            $sem['held'] && $lines[] = '  ttl:     ' . self::seconds($sem['ttl']);
            $lines[] = '  waiting: ' . $sem['waiting'];
        }
        foreach ($seen['unsafe'] ?? [] as $unsafe) {
            $lines[] = sprintf('UNSAFE server %s (%s): %s', $unsafe['server'], $unsafe['reason'], $unsafe['detail']);
        }
        if (($seen['unsafe'] ?? []) !== []) {
            $lines[] = '  (redislock doctor tells more: ' . Doctor::DOCS . ')';
        }
        return implode("\n", $lines) . "\n";
    }

    /**
     * The `watch` line.
     *
     * @param  array<string, mixed>  $seen  what RedisLock::inspect() returned
     */
    public static function line(array $seen): string
    {
        $line = self::state($seen);
        if ($seen['held']) {
            $line .= sprintf(' by %s, ttl %s', implode(', ', $seen['owners']) ?: '?', self::seconds($seen['ttl']));
        }
        $line .= sprintf(', %d waiting', $seen['waiting']);
        if (($seen['unsafe'] ?? []) !== []) {
            $line .= sprintf(' (UNSAFE server: %s)', implode(', ', array_unique(array_column($seen['unsafe'], 'reason'))));
        }
        $sem = $seen['semaphore'];
        if ($sem !== null) {
            $line .= sprintf('; semaphore %d of %s held, %d waiting', $sem['holders'], $sem['permits'] ?? '?', $sem['waiting']);
        }
        return $line;
    }

    /** @param array<string, mixed> $seen */
    private static function state(array $seen): string
    {
        return match (true) {
            !$seen['held'] => 'free',
            $seen['mode'] === 'read' => sprintf('held for reading by %d reader%s', $seen['readers'], $seen['readers'] === 1 ? '' : 's'),
            default => 'held for writing',
        };
    }

    private static function seconds(?float $ttl): string
    {
        return $ttl === null ? 'none' : sprintf('%.3f s', $ttl);
    }
}

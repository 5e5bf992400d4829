<?php

namespace RedisLock\Bridge\Console;

/**
 * Words for `redislock doctor`: what `RedisLock::diagnose()` found of each
 * server under the locks (whether it can lose a held lock by itself, why
 * and the fix; its round trip; what it has of the lock protocol's needs),
 * and the exit status it means.
 */
final class Doctor
{
    /** Where the findings are explained. */
    public const DOCS = 'docs/operations.md, "Is my Redis safe for locks?"';

    /** The capabilities, in the order shown, with their labels. */
    private const CAPABILITIES = [
        'scripts' => 'scripts (EVAL)',
        'time_in_scripts' => 'TIME in scripts',
        'client_unblock' => 'CLIENT UNBLOCK',
        'compare_delete' => 'compare-and-delete',
        'acl' => "ACL on the lock's keys",
    ];

    /**
     * The exit status: 0 when every server is known safe, 1 when one is
     * unsafe, or unknown (INFO refused, no answer): nothing says it is safe.
     *
     * @param  list<array<string, mixed>>  $nodes  what RedisLock::diagnose() returned
     */
    public static function status(array $nodes): int
    {
        foreach ($nodes as $node) {
            if ($node['verdict'] !== 'safe') {
                return 1;
            }
        }

        return $nodes === [] ? 1 : 0;
    }

    /**
     * The report, a block per server and a verdict line.
     *
     * @param  list<array<string, mixed>>  $nodes  what RedisLock::diagnose() returned
     */
    public static function report(string $name, array $nodes): string
    {
        $lines = [sprintf('redislock doctor: %d server%s under lock "%s"', count($nodes), count($nodes) === 1 ? '' : 's', self::text($name)), ''];
        foreach ($nodes as $node) {
            array_push($lines, ...self::node($node));
            $lines[] = '';
        }
        $count = static fn (string $verdict): int => count(array_filter($nodes, static fn (array $n): bool => $n['verdict'] === $verdict));
        [$unsafe, $unknown] = [$count('unsafe'), $count('unknown')];
        $lines[] = match (true) {
            $nodes === [] => 'verdict: UNKNOWN: no server found',
            $unsafe > 0 => sprintf('verdict: UNSAFE: %d of %d server%s can lose a held lock by itself%s; why and the fix: %s',
                $unsafe, count($nodes), count($nodes) === 1 ? '' : 's', $unknown > 0 ? sprintf(', %d unknown', $unknown) : '', self::DOCS),
            $unknown > 0 => sprintf('verdict: UNKNOWN: %d of %d server%s could not be read; not known to be safe: %s',
                $unknown, count($nodes), count($nodes) === 1 ? '' : 's', self::DOCS),
            default => 'verdict: SAFE: no server can evict or forget a held lock by itself (as INFO tells)',
        };

        return implode("\n", $lines) . "\n";
    }

    /**
     * @param  array<string, mixed>  $node
     * @return list<string>
     */
    private static function node(array $node): array
    {
        $lines = [sprintf('%s  %s', self::text($node['server']), strtoupper($node['verdict']))];
        if ($node['version'] !== null || $node['role'] !== null) {
            $lines[] = '  ' . implode(', ', array_filter([
                $node['version'] === null ? null : (str_starts_with($node['version'], 'valkey') ? ucfirst(self::text($node['version'])) : 'Redis ' . self::text($node['version'])),
                $node['role'] === null ? null : self::text($node['role']) . ($node['replicas'] !== null && $node['role'] === 'master' ? sprintf(' with %d replica%s', $node['replicas'], $node['replicas'] === 1 ? '' : 's') : ''),
                $node['cluster'] ? 'cluster node' : null,
                $node['round_trip_ms'] === null ? null : sprintf('round trip %.3f ms', $node['round_trip_ms']),
            ]));
        }
        if ($node['maxmemory'] !== null || $node['aof'] !== null) {
            $lines[] = sprintf('  maxmemory %s, maxmemory-policy %s; append-only file %s',
                $node['maxmemory'] === null ? '?' : ($node['maxmemory'] === 0 ? '0 (no limit)' : self::bytes($node['maxmemory'])),
                self::text((string) ($node['maxmemory_policy'] ?? '?')),
                $node['aof'] === null ? '?' : ($node['aof'] ? 'yes' . (isset($node['appendfsync']) ? ' (appendfsync ' . self::text($node['appendfsync']) . ')' : '') : 'no'));
        }
        foreach ($node['findings'] as $finding) {
            $lines[] = sprintf('  %-7s %s: %s', strtoupper($finding['severity']), $finding['reason'], self::text($finding['detail']));
        }
        $scripts = $node['scripts']['status'] === 'yes';
        foreach (self::CAPABILITIES as $key => $label) {
            $capability = $node[$key];
            $detail = self::text($capability['detail']);
            if ($key === 'compare_delete' && $capability['status'] === 'no' && $scripts) {
                $detail = 'not needed: scripts run';
            }
            if ($key === 'time_in_scripts' && $capability['status'] === 'no') {
                $detail = 'not needed: no lock script reads the clock';
            }
            $lines[] = sprintf('  %-24s %s%s', $label, $capability['status'], $detail === '' ? '' : " ($detail)");
        }

        return $lines;
    }

    /** Bytes in the units redis.conf takes. */
    private static function bytes(int $bytes): string
    {
        foreach (['gb' => 1 << 30, 'mb' => 1 << 20, 'kb' => 1 << 10] as $unit => $size) {
            if ($bytes >= $size && $bytes % $size === 0) {
                return ($bytes / $size) . $unit;
            }
        }

        return (string) $bytes;
    }

    /** A server's words as a terminal may show them: no control characters. */
    private static function text(string $text): string
    {
        if (preg_match('//u', $text) !== 1) {
            $text = preg_replace('/[\x80-\xFF]/', '?', $text) ?? '';
        }

        return preg_replace('/[\x{00}-\x{1F}\x{7F}-\x{9F}]/u', '', $text) ?? '';
    }
}

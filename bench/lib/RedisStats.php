<?php

declare(strict_types=1);

/**
 * What Redis did during a measurement, from INFO counters, on a connection
 * of its own.
 *
 * - cmds:  total_commands_processed. Counts every command Redis executed,
 *          including the ones a Lua script runs with redis.call().
 * - reads: total_reads_processed. One per read event on a client socket:
 *          for request/response clients (every client here; none
 *          pipelines) that is one per top-level command, i.e. one per
 *          network round trip. Commands run inside a script are not reads.
 * - calls: INFO commandstats calls per command (also counts commands run
 *          inside scripts), to show the command mix.
 * - cpu:   the server's used_cpu_sys + used_cpu_user (INFO cpu), in µs: what
 *          the server spent, whoever sent the commands.
 *
 * Our own INFO calls are measured, not assumed: work() subtracts the cost of
 * one snapshot, taken as the difference of two back-to-back snapshots.
 */
final class RedisStats
{
    private Redis $redis;

    public function __construct(Endpoint $endpoint)
    {
        $this->redis = new Redis();
        $this->redis->connect($endpoint->host, $endpoint->port);
    }

    public function snapshot(): array
    {
        $info = $this->redis->rawCommand('INFO', 'stats', 'commandstats', 'cpu');
        $snap = ['cmds' => 0, 'reads' => 0, 'cpu' => 0.0, 'calls' => []];
        foreach (explode("\n", $info) as $line) {
            $line = trim($line);
            if (str_starts_with($line, 'total_commands_processed:')) {
                $snap['cmds'] = (int) substr($line, 25);
            } elseif (str_starts_with($line, 'total_reads_processed:')) {
                $snap['reads'] = (int) substr($line, 22);
            } elseif (preg_match('/^used_cpu_(sys|user):([\d.]+)$/', $line, $m)) {
                $snap['cpu'] += (float) $m[2] * 1e6;
            } elseif (preg_match('/^cmdstat_([^:]+):calls=(\d+)/', $line, $m)) {
                $snap['calls'][$m[1]] = (int) $m[2];
            }
        }
        return $snap;
    }

    /** Work between $s1 and $s2, minus one snapshot's own cost (= $s1 - $s0, taken back to back). */
    public static function work(array $s0, array $s1, array $s2): array
    {
        $own = self::diff($s0, $s1);
        $all = self::diff($s1, $s2);
        $calls = [];
        foreach ($all['calls'] as $cmd => $n) {
            $n -= $own['calls'][$cmd] ?? 0;
            if ($n > 0) {
                $calls[$cmd] = $n;
            }
        }
        ksort($calls);
        return ['cmds' => $all['cmds'] - $own['cmds'], 'reads' => $all['reads'] - $own['reads'],
            'cpu' => $all['cpu'] - $own['cpu'], 'calls' => $calls];
    }

    private static function diff(array $a, array $b): array
    {
        $calls = [];
        foreach ($b['calls'] as $cmd => $n) {
            $calls[$cmd] = $n - ($a['calls'][$cmd] ?? 0);
        }
        return ['cmds' => $b['cmds'] - $a['cmds'], 'reads' => $b['reads'] - $a['reads'],
            'cpu' => $b['cpu'] - $a['cpu'], 'calls' => $calls];
    }

    /** Per-unit rates of a work() result, e.g. per cycle or per critical section. */
    public static function perUnit(array $work, int $units): array
    {
        $calls = [];
        foreach ($work['calls'] as $cmd => $n) {
            $calls[$cmd] = round($n / $units, 3);
        }
        return [
            'rt' => round($work['reads'] / $units, 3),
            'cmds' => round($work['cmds'] / $units, 3),
            'cpu_us' => round(($work['cpu'] ?? 0) / $units, 3),
            'calls' => $calls,
        ];
    }
}

<?php

declare(strict_types=1);

/**
 * RedisStats over every server of a topology: one connection per server,
 * and a snapshot that sums the counters of all of them (so round trips and
 * commands of a Redlock cycle count every master, and a cluster's count
 * whichever master owns the key). Same snapshot shape as RedisStats, so
 * RedisStats::work() and ::perUnit() apply unchanged (work() subtracts the
 * cost of one snapshot on every server).
 */
final class TopologyStats
{
    /** @var list<RedisStats> */
    private array $servers = [];

    public function __construct(Topology $topology)
    {
        foreach ($topology->endpoints as $endpoint) {
            $this->servers[] = new RedisStats($endpoint);
        }
    }

    public function snapshot(): array
    {
        $sum = ['cmds' => 0, 'reads' => 0, 'cpu' => 0.0, 'calls' => []];
        foreach ($this->servers as $server) {
            $s = $server->snapshot();
            $sum['cmds'] += $s['cmds'];
            $sum['reads'] += $s['reads'];
            $sum['cpu'] += $s['cpu'];
            foreach ($s['calls'] as $cmd => $n) {
                $sum['calls'][$cmd] = ($sum['calls'][$cmd] ?? 0) + $n;
            }
        }
        return $sum;
    }
}

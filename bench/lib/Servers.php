<?php

declare(strict_types=1);

require_once dirname(__DIR__, 2) . '/crates/fixture/php/RedisFixture.php';

/**
 * The extra redis-servers of the topology suite (plain masters and a local
 * Redis Cluster), started by the one fixture, `redis-fixture`
 * (crates/fixture): claimed random loopback ports below the ephemeral
 * range, each server in its own directory, ready only when it answers
 * with the pid it was started as, stopped by that pid.
 *
 * - Each start() or startCluster() runs one redis-fixture child; stopping
 *   it (or this process dying, which closes its stdin) stops its servers.
 * - Every server's pid is also written to $pidFile (one a line) while it
 *   runs, so scripts/bench.sh can kill what a crashed PHP process left
 *   behind.
 * - stopAll() stops every fixture and waits for it. Call it in `finally`
 *   and from a shutdown function; it is idempotent.
 */
final class Servers
{
    /** @var list<RedisFixture> */
    private array $fixtures = [];

    /**
     * @param list<string> $prefix command prefix, e.g. ['taskset', '-c', '0'] to pin every server
     *                             (taskset execs the fixture, whose servers inherit the affinity)
     */
    public function __construct(private readonly array $prefix = [], private readonly ?string $pidFile = null)
    {
    }

    /** Starts one master with extra redis-server arguments; returns its endpoint. */
    public function start(array $args = []): Endpoint
    {
        $fixture = $this->run(['server', ...$args]);
        return new Endpoint('127.0.0.1', (int) $fixture->get('port'));
    }

    /**
     * Starts a Redis Cluster of $masters masters and no replicas, each node in
     * its own directory, ready when every node agrees on the slots.
     *
     * @return list<Endpoint>
     */
    public function startCluster(int $masters): array
    {
        $fixture = $this->run(['topology', 'cluster', (string) $masters, '0']);
        return array_map(fn (string $url) => new Endpoint('127.0.0.1', parse_url($url, PHP_URL_PORT)),
            $fixture->all('node'));
    }

    /** @return list<int> pids of the running servers */
    public function pids(): array
    {
        $pids = [];
        foreach ($this->fixtures as $fixture) {
            array_push($pids, ...array_map('intval', $fixture->all('pid')));
        }
        return $pids;
    }

    public function stopAll(): void
    {
        foreach ($this->fixtures as $fixture) {
            $fixture->stop();
        }
        $this->fixtures = [];
        $this->writePidFile();
    }

    public function __destruct()
    {
        $this->stopAll();
    }

    private function run(array $args): RedisFixture
    {
        $fixture = new RedisFixture($args, $this->prefix);
        $this->fixtures[] = $fixture;
        $this->writePidFile();
        return $fixture;
    }

    private function writePidFile(): void
    {
        if ($this->pidFile !== null) {
            file_put_contents($this->pidFile, implode('', array_map(fn ($p) => "$p\n", $this->pids())));
        }
    }
}

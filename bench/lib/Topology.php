<?php

declare(strict_types=1);

/**
 * Where the locks of one topology-suite measurement live: one server, a
 * Redlock set of independent masters, or a Redis Cluster (reached through
 * its first node as the seed). Passed between processes as one CLI
 * argument: "<kind>:<host>:<port>,<host>:<port>,...".
 */
final class Topology
{
    public const KINDS = ['single', 'redlock', 'cluster'];

    /** @param list<Endpoint> $endpoints every server (for a cluster: every master; the first is the seed) */
    public function __construct(public readonly string $kind, public readonly array $endpoints)
    {
        if (!in_array($kind, self::KINDS, true) || $endpoints === []) {
            throw new InvalidArgumentException("bad topology $kind");
        }
    }

    public static function parse(string $arg): self
    {
        [$kind, $list] = explode(':', $arg, 2) + [1 => ''];
        $endpoints = [];
        foreach (array_filter(explode(',', $list)) as $hostPort) {
            [$host, $port] = explode(':', $hostPort);
            $endpoints[] = new Endpoint($host, (int) $port);
        }
        return new self($kind, $endpoints);
    }

    public function arg(): string
    {
        return $this->kind . ':' . implode(',', array_map(fn (Endpoint $e) => "{$e->host}:{$e->port}", $this->endpoints));
    }

    /** Short name used in the raw results and BENCH_* lists: single, redlock3, redlock5, cluster3. */
    public function id(): string
    {
        return $this->kind === 'single' ? 'single' : $this->kind . count($this->endpoints);
    }

    public function label(): string
    {
        $n = count($this->endpoints);
        return match ($this->kind) {
            'single' => '1 server',
            'redlock' => "Redlock, $n masters",
            'cluster' => "Cluster, $n masters",
        };
    }

    /** @return list<string> redis:// URL of every server */
    public function urls(): array
    {
        return array_map(fn (Endpoint $e) => $e->url(), $this->endpoints);
    }
}

/**
 * The target of a bench script: --topology (the topology suite) or --port
 * (the one private server of the main suites).
 */
function bench_target(array $opt): Endpoint|Topology
{
    if (($opt['topology'] ?? '') !== '') {
        return Topology::parse($opt['topology']);
    }
    if (($opt['port'] ?? '') === '') {
        fwrite(STDERR, basename($_SERVER['argv'][0]) . ": --port or --topology is required\n");
        exit(2);
    }
    return new Endpoint('127.0.0.1', (int) $opt['port']);
}

/** The contender $name, prepared, on the target's servers. */
function target_contender(string $name, Endpoint|Topology $target): Contender
{
    return $target instanceof Topology ? make_topology_contender($name, $target) : make_contender($name, $target);
}

/** INFO counters of every server of the target (summed). */
function target_stats(Endpoint|Topology $target): RedisStats|TopologyStats
{
    return $target instanceof Topology ? new TopologyStats($target) : new RedisStats($target);
}

function target_label(string $name, Endpoint|Topology $target): string
{
    return $target instanceof Topology ? topology_contender_label($name) . ', ' . $target->label() : contender_label($name);
}

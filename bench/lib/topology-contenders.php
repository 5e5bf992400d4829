<?php

declare(strict_types=1);

/**
 * The contenders of the topology suite. Names match bench/lib/contenders.php
 * (so BENCH_ONLY selects them too); each is built from a Topology by its
 * own adapter file in bench/lib/contenders/. `topologies` lists the
 * topology ids (Topology::id()) each one runs on, per suite.
 */
function topology_contenders(): array
{
    return [
        'redislock' => [
            'label' => 'redislock (ext)',
            'file' => 'redislock-topology',
            'uncontended' => ['single', 'redlock3', 'redlock5', 'cluster3'],
            'contended' => ['redlock5'],
        ],
        'symfony' => [
            'label' => 'Symfony CombinedStore (Consensus, RedisStore x N)',
            'file' => 'symfony-combined',
            'uncontended' => ['redlock5'],
            'contended' => ['redlock5'],
        ],
    ];
}

function topology_contender_label(string $name): string
{
    return topology_contenders()[$name]['label'] ?? $name;
}

/** Loads the adapter of $name and builds it, prepared, on $topology. */
function make_topology_contender(string $name, Topology $topology): Contender
{
    if (!isset(topology_contenders()[$name])) {
        throw new InvalidArgumentException("unknown topology contender \"$name\" (known: " . implode(', ', array_keys(topology_contenders())) . ')');
    }
    $factory = require __DIR__ . '/contenders/' . topology_contenders()[$name]['file'] . '.php';
    $contender = $factory($topology);
    $contender->prepare();
    return $contender;
}

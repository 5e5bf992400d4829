<?php

declare(strict_types=1);

require_once __DIR__ . '/../SymfonyLockContender.php';

use Symfony\Component\Lock\PersistingStoreInterface;
use Symfony\Component\Lock\Store\CombinedStore;
use Symfony\Component\Lock\Store\RedisStore;
use Symfony\Component\Lock\Strategy\ConsensusStrategy;

/**
 * Symfony Lock's answer to Redlock: a CombinedStore with ConsensusStrategy
 * (a majority) over one RedisStore per master, each on its own phpredis
 * connection. CombinedStore asks its stores one after another.
 * acquire(true) blocks with Symfony's own loop (usleep 100 +- 10 ms).
 * Only a Redlock set of masters makes sense here.
 */
final class SymfonyCombinedContender extends SymfonyLockContender
{
    public function __construct(private readonly Topology $topology)
    {
        if ($topology->kind !== 'redlock') {
            throw new InvalidArgumentException('Symfony CombinedStore runs over a Redlock set of masters only');
        }
    }

    protected function store(): PersistingStoreInterface
    {
        $stores = [];
        foreach ($this->topology->endpoints as $endpoint) {
            $redis = new Redis();
            $redis->connect($endpoint->host, $endpoint->port);
            $stores[] = new RedisStore($redis);
        }
        return new CombinedStore($stores, new ConsensusStrategy());
    }
}

return fn (Topology $t) => new SymfonyCombinedContender($t);

<?php

declare(strict_types=1);

require_once '/usr/share/php/Symfony/Component/Lock/autoload.php';

use Symfony\Component\Lock\LockFactory;
use Symfony\Component\Lock\LockInterface;
use Symfony\Component\Lock\Store\CombinedStore;
use Symfony\Component\Lock\Store\RedisStore;
use Symfony\Component\Lock\Strategy\ConsensusStrategy;

/**
 * Symfony Lock's answer to Redlock: a CombinedStore with ConsensusStrategy
 * (a majority) over one RedisStore per master, each on its own phpredis
 * connection; a LockFactory and one createLock() per hold. CombinedStore
 * asks its stores one after another. acquire(true) blocks with Symfony's
 * own loop (usleep 100 +- 10 ms; no timeout, so $wait is not used).
 * Only a Redlock set of masters makes sense here.
 */
final class SymfonyCombinedContender implements Contender
{
    private LockFactory $factory;
    private ?LockInterface $lock = null;

    public function __construct(private readonly Topology $topology)
    {
        if ($topology->kind !== 'redlock') {
            throw new InvalidArgumentException('Symfony CombinedStore runs over a Redlock set of masters only');
        }
    }

    public function prepare(): void
    {
        $stores = [];
        foreach ($this->topology->endpoints as $endpoint) {
            $redis = new Redis();
            $redis->connect($endpoint->host, $endpoint->port);
            $stores[] = new RedisStore($redis);
        }
        $this->factory = new LockFactory(new CombinedStore($stores, new ConsensusStrategy()));
        // Each store checks once whether its Redis allows TIME in scripts.
        $lock = $this->factory->createLock('bench:prepare:' . getmypid(), LOCK_TTL);
        $lock->acquire();
        $lock->release();
    }

    public function tryAcquire(string $key): bool
    {
        $this->lock = $this->factory->createLock($key, LOCK_TTL);
        return $this->lock->acquire(false);
    }

    public function acquireBlocking(string $key, float $wait): bool
    {
        $this->lock = $this->factory->createLock($key, LOCK_TTL);
        return $this->lock->acquire(true);
    }

    public function release(): bool
    {
        $this->lock->release(); // throws when the lock could not be released
        $this->lock = null;
        return true;
    }
}

return fn (Topology $t) => new SymfonyCombinedContender($t);

<?php

declare(strict_types=1);

require_once '/usr/share/php/Symfony/Component/Lock/autoload.php';

use Symfony\Component\Lock\LockFactory;
use Symfony\Component\Lock\LockInterface;
use Symfony\Component\Lock\Store\RedisStore;

/**
 * Symfony Lock: RedisStore on a phpredis client, a LockFactory, one
 * createLock() per hold. acquire(true) blocks with Symfony's own loop
 * (usleep 100 +- 10 ms; it has no timeout, so $wait is not used).
 */
final class SymfonyContender implements Contender
{
    private LockFactory $factory;
    private ?LockInterface $lock = null;

    public function __construct(private readonly Endpoint $endpoint)
    {
    }

    public function prepare(): void
    {
        $redis = new Redis();
        $redis->connect($this->endpoint->host, $this->endpoint->port);
        $this->factory = new LockFactory(new RedisStore($redis));
        // The store checks once whether Redis allows TIME in scripts.
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

return fn (Endpoint $redis) => new SymfonyContender($redis);

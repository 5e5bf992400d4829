<?php

declare(strict_types=1);

require_once '/usr/share/php/Symfony/Component/Lock/autoload.php';
require_once __DIR__ . '/../../../bridge/autoload.php';

use RedisLock\Bridge\Symfony\RedisLockStore;
use Symfony\Component\Lock\LockFactory;
use Symfony\Component\Lock\LockInterface;

/**
 * Symfony Lock with the same code as `symfony` (a LockFactory, one
 * createLock($key, 10) per hold, acquire() / acquire(true) / release()),
 * only the store differs: the bridge's RedisLockStore on the extension.
 * acquire(true) goes to the store's waitAndSave(), which waits in the
 * extension and is woken by the holder's release (no 100 ms polling).
 */
final class SymfonyRedislockContender implements Contender
{
    private LockFactory $factory;
    private ?LockInterface $lock = null;

    public function __construct(private readonly Endpoint $endpoint)
    {
    }

    public function prepare(): void
    {
        if (!extension_loaded('redislock')) {
            throw new RuntimeException('the redislock extension is not loaded (php -d extension=.../redislock.so)');
        }
        $this->factory = new LockFactory(new RedisLockStore($this->endpoint->url()));
        // Opens the extension's pooled connection and loads its scripts.
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
        // Symfony's acquire(true) has no timeout (as in `symfony`), so $wait is not used.
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

return fn (Endpoint $redis) => new SymfonyRedislockContender($redis);

<?php

declare(strict_types=1);

require_once '/usr/share/php/Symfony/Component/Lock/autoload.php';

use Symfony\Component\Lock\LockFactory;
use Symfony\Component\Lock\LockInterface;
use Symfony\Component\Lock\PersistingStoreInterface;

/**
 * Symfony Lock as its users write it: a LockFactory over a store, one
 * createLock($key, LOCK_TTL) per hold, acquire() / acquire(true) /
 * release(). The contenders differ only in the store (store()).
 * acquire(true) has no timeout in Symfony, so $wait is not used.
 */
abstract class SymfonyLockContender implements Contender
{
    private LockFactory $factory;
    private ?LockInterface $lock = null;

    /** The store of this contender, connected. */
    abstract protected function store(): PersistingStoreInterface;

    public function prepare(): void
    {
        $this->factory = new LockFactory($this->store());
        // Connects, and lets the store check its server once (scripts, TIME).
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

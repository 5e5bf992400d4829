<?php

declare(strict_types=1);

require_once '/usr/share/php/Symfony/Component/Lock/autoload.php';
require_once '/usr/share/php/Symfony/Component/Semaphore/autoload.php';

use Symfony\Component\Lock\LockFactory;
use Symfony\Component\Lock\PersistingStoreInterface as LockStore;
use Symfony\Component\Semaphore\PersistingStoreInterface as SemaphoreStore;
use Symfony\Component\Semaphore\SemaphoreFactory;

/**
 * Symfony as its users write it, one fresh object per hold:
 * - semaphore: `SemaphoreFactory::createSemaphore($name, $permits, 1, 10.0)`
 *   and acquire(). Symfony's Semaphore cannot block (acquire() tries once),
 *   so the wait is the loop its users write: try, usleep 100 +- 10 ms (the
 *   sleep of Symfony Lock's own blocking loop), until $wait runs out;
 *   release().
 * - rw: `LockFactory::createLock($key, 10)`, acquireRead(true) for a read,
 *   acquire(true) for a write (Symfony's waiting: the store's
 *   waitAndSave[Read]() when it is a blocking store, else its loop of
 *   usleep 100 +- 10 ms; no timeout, so $wait is not used), release().
 * The contenders differ only in the stores.
 */
abstract class SymfonyPrimitives extends PrimitiveContender
{
    private SemaphoreFactory $semaphores;
    private LockFactory $locks;

    abstract protected function semaphoreStore(): SemaphoreStore;

    abstract protected function lockStore(): LockStore;

    public function prepare(string $workload): void
    {
        $warm = 'bench:prepare:' . getmypid();
        if ($workload === 'semaphore') {
            $this->semaphores = new SemaphoreFactory($this->semaphoreStore());
            $s = $this->semaphores->createSemaphore($warm, 4, 1, LOCK_TTL);
            $s->acquire() && $s->release();
        } else {
            $this->locks = new LockFactory($this->lockStore());
            $l = $this->locks->createLock($warm, LOCK_TTL);
            $l->acquireRead() && $l->release();
            $l->acquire() && $l->release();
        }
    }

    public function withPermit(string $name, int $permits, float $wait, callable $section): bool
    {
        $semaphore = $this->semaphores->createSemaphore($name, $permits, 1, LOCK_TTL);
        if (!poll_until($wait, fn () => $semaphore->acquire())) {
            return false;
        }
        $section();
        $this->release($semaphore);
        return true;
    }

    public function withRead(string $key, float $wait, callable $section): bool
    {
        $lock = $this->locks->createLock($key, LOCK_TTL);
        $lock->acquireRead(true);   // returns true or throws
        $section();
        $this->release($lock);
        return true;
    }

    public function withWrite(string $key, float $wait, callable $section): bool
    {
        $lock = $this->locks->createLock($key, LOCK_TTL);
        $lock->acquire(true);       // returns true or throws
        $section();
        $this->release($lock);
        return true;
    }

    /** Symfony's release() throws when the hold could not be released. */
    private function release(object $hold): void
    {
        try {
            $hold->release();
        } catch (RuntimeException) {
            $this->releaseFailures++;
        }
    }
}

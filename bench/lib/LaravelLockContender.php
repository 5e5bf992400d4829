<?php

declare(strict_types=1);

require_once '/usr/share/php/Illuminate/autoload.php';

use Illuminate\Contracts\Cache\Lock;
use Illuminate\Contracts\Cache\LockTimeoutException;

/**
 * Laravel's cache lock as its users write it: one lock($key, LOCK_TTL) per
 * hold, get() to try once, block($seconds) to wait, release(). The
 * contenders differ in where the lock comes from (newLock()).
 */
abstract class LaravelLockContender implements Contender
{
    private ?Lock $lock = null;

    /** A new lock object on $key with LOCK_TTL. */
    abstract protected function newLock(string $key): Lock;

    public function tryAcquire(string $key): bool
    {
        $this->lock = $this->newLock($key);
        return (bool) $this->lock->get();
    }

    public function acquireBlocking(string $key, float $wait): bool
    {
        $this->lock = $this->newLock($key);
        try {
            return (bool) $this->lock->block((int) ceil($wait));
        } catch (LockTimeoutException) {
            return false;
        }
    }

    public function release(): bool
    {
        $ok = (bool) $this->lock->release();
        $this->lock = null;
        return $ok;
    }
}

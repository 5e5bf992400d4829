<?php

declare(strict_types=1);

/**
 * The control: the same critical section with no lock at all. It must show
 * lost updates and overlapping intervals; if it does not, the checker is
 * broken.
 */
final class NoLockContender implements Contender
{
    public function prepare(): void
    {
    }

    public function tryAcquire(string $key): bool
    {
        return true;
    }

    public function acquireBlocking(string $key, float $wait): bool
    {
        return true;
    }

    public function release(): bool
    {
        return true;
    }
}

return fn (Endpoint $redis) => new NoLockContender();

<?php

declare(strict_types=1);

/**
 * The control: the same sections with no semaphore and no lock. It must
 * show more than N holders at once (semaphore) and writes overlapping
 * other sections (rw); if it does not, the checker is broken.
 */
final class NoLockPrimitives extends PrimitiveContender
{
    public function prepare(string $workload): void
    {
    }

    public function withPermit(string $name, int $permits, float $wait, callable $section): bool
    {
        $section();
        return true;
    }

    public function withRead(string $key, float $wait, callable $section): bool
    {
        $section();
        return true;
    }

    public function withWrite(string $key, float $wait, callable $section): bool
    {
        $section();
        return true;
    }
}

return ['make' => fn (Endpoint $redis) => new NoLockPrimitives()];

<?php

declare(strict_types=1);

/**
 * A permit of the extension's semaphore (4 permits), uncontended only: a
 * fresh RedisLock\Semaphore per hold, acquire() to try once, release().
 * Measured against the write lock (`redislock`) in the budget's
 * primitives cost table.
 */
final class RedislockPermitContender implements Contender
{
    private ?RedisLock\Semaphore $semaphore = null;

    public function __construct(private readonly string $url)
    {
    }

    public function prepare(): void
    {
        if (!extension_loaded('redislock')) {
            throw new RuntimeException('the redislock extension is not loaded (php -d extension=.../redislock.so)');
        }
        // Opens the pooled connection and loads the semaphore's scripts.
        $semaphore = new RedisLock\Semaphore('bench:prepare:' . getmypid(), 4, LOCK_TTL, $this->url);
        $semaphore->acquire();
        $semaphore->release();
    }

    public function tryAcquire(string $key): bool
    {
        $this->semaphore = new RedisLock\Semaphore($key, 4, LOCK_TTL, $this->url);
        return $this->semaphore->acquire();
    }

    public function acquireBlocking(string $key, float $wait): bool
    {
        $this->semaphore = new RedisLock\Semaphore($key, 4, LOCK_TTL, $this->url);
        return $this->semaphore->acquire($wait);
    }

    public function release(): bool
    {
        $ok = $this->semaphore->release();
        $this->semaphore = null;
        return $ok;
    }
}

return fn (Endpoint $redis) => new RedislockPermitContender($redis->url());

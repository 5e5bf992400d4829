<?php

declare(strict_types=1);

/**
 * The extension's read hold, uncontended only: a fresh RedisLock per hold,
 * acquireRead() to try once, release(). Measured against the write lock
 * (`redislock`) in the budget's primitives cost table.
 */
final class RedislockReadContender implements Contender
{
    private ?RedisLock $lock = null;

    public function __construct(private readonly string $url)
    {
    }

    public function prepare(): void
    {
        if (!extension_loaded('redislock')) {
            throw new RuntimeException('the redislock extension is not loaded (php -d extension=.../redislock.so)');
        }
        // Opens the pooled connection and loads the read scripts.
        $lock = new RedisLock('bench:prepare:' . getmypid(), LOCK_TTL, $this->url);
        $lock->acquireRead();
        $lock->release();
    }

    public function tryAcquire(string $key): bool
    {
        $this->lock = new RedisLock($key, LOCK_TTL, $this->url);
        return $this->lock->acquireRead();
    }

    public function acquireBlocking(string $key, float $wait): bool
    {
        $this->lock = new RedisLock($key, LOCK_TTL, $this->url);
        return $this->lock->acquireRead($wait);
    }

    public function release(): bool
    {
        $ok = $this->lock->release();
        $this->lock = null;
        return $ok;
    }
}

return fn (Endpoint $redis) => new RedislockReadContender($redis->url());

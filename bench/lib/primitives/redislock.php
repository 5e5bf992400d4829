<?php

declare(strict_types=1);

use RedisLock\Semaphore;

/**
 * The extension under test, a fresh object per hold:
 * - semaphore: `new RedisLock\Semaphore($name, $permits, 10.0, $url)`,
 *   acquire($wait) (waits in line, woken by a release), release();
 * - rw: `new RedisLock($key, 10.0, $url)`, acquireRead($wait) for a read,
 *   acquire($wait) for a write (both woken without polling), release().
 */
final class RedislockPrimitives extends PrimitiveContender
{
    public function __construct(private readonly string $url)
    {
    }

    public function prepare(string $workload): void
    {
        if (!extension_loaded('redislock')) {
            throw new RuntimeException('the redislock extension is not loaded (php -d extension=.../redislock.so)');
        }
        // Opens the pooled connection and loads the scripts of this workload.
        $warm = 'bench:prepare:' . getmypid();
        if ($workload === 'semaphore') {
            $s = new Semaphore($warm, 4, LOCK_TTL, $this->url);
            $s->acquire() && $s->release();
        } else {
            $l = new RedisLock($warm, LOCK_TTL, $this->url);
            $l->acquireRead() && $l->release();
            $l->acquire() && $l->release();
        }
    }

    public function withPermit(string $name, int $permits, float $wait, callable $section): bool
    {
        $semaphore = new Semaphore($name, $permits, LOCK_TTL, $this->url);
        if (!$semaphore->acquire($wait)) {
            return false;
        }
        $section();
        $semaphore->release() || $this->releaseFailures++;
        return true;
    }

    public function withRead(string $key, float $wait, callable $section): bool
    {
        $lock = new RedisLock($key, LOCK_TTL, $this->url);
        if (!$lock->acquireRead($wait)) {
            return false;
        }
        $section();
        $lock->release() || $this->releaseFailures++;
        return true;
    }

    public function withWrite(string $key, float $wait, callable $section): bool
    {
        $lock = new RedisLock($key, LOCK_TTL, $this->url);
        if (!$lock->acquire($wait)) {
            return false;
        }
        $section();
        $lock->release() || $this->releaseFailures++;
        return true;
    }
}

return ['make' => fn (Endpoint $redis) => new RedislockPrimitives($redis->url())];

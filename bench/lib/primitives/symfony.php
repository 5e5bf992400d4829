<?php

declare(strict_types=1);

require_once __DIR__ . '/../SymfonyPrimitives.php';

use Symfony\Component\Lock\PersistingStoreInterface as LockStore;
use Symfony\Component\Lock\Store\RedisStore as LockRedisStore;
use Symfony\Component\Semaphore\PersistingStoreInterface as SemaphoreStore;
use Symfony\Component\Semaphore\Store\RedisStore as SemaphoreRedisStore;

/**
 * Symfony's own Redis stores on a phpredis client: Semaphore's RedisStore
 * (two sorted sets, one EVAL per acquire) and Lock's RedisStore (a
 * SharedLockStoreInterface, not a blocking one: acquireRead(true) and
 * acquire(true) poll every 100 +- 10 ms).
 */
final class SymfonyOwnPrimitives extends SymfonyPrimitives
{
    public function __construct(private readonly Endpoint $endpoint)
    {
    }

    private function connect(): Redis
    {
        $redis = new Redis();
        $redis->connect($this->endpoint->host, $this->endpoint->port);
        return $redis;
    }

    protected function semaphoreStore(): SemaphoreStore
    {
        return new SemaphoreRedisStore($this->connect());
    }

    protected function lockStore(): LockStore
    {
        return new LockRedisStore($this->connect());
    }
}

return ['make' => fn (Endpoint $redis) => new SymfonyOwnPrimitives($redis)];

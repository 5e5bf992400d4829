<?php

declare(strict_types=1);

require_once __DIR__ . '/../SymfonyPrimitives.php';
require_once __DIR__ . '/../../../bridge/autoload.php';

use RedisLock\Bridge\Symfony\RedisLockSemaphoreStore;
use RedisLock\Bridge\Symfony\RedisLockStore;
use Symfony\Component\Lock\PersistingStoreInterface as LockStore;
use Symfony\Component\Lock\SharedLockStoreInterface;
use Symfony\Component\Semaphore\PersistingStoreInterface as SemaphoreStore;

/**
 * The `symfony` code with the bridge's stores (bridge/src/Symfony):
 * RedisLockSemaphoreStore($url) for the semaphore (still Symfony's
 * try-and-sleep loop: its Semaphore cannot block, whatever the store) and
 * RedisLockStore($url) for read/write, measured only when that store is a
 * SharedLockStoreInterface (otherwise Symfony's acquireRead() would fall
 * back to a write lock).
 */
final class SymfonyRedislockPrimitives extends SymfonyPrimitives
{
    public function __construct(private readonly string $url)
    {
    }

    protected function semaphoreStore(): SemaphoreStore
    {
        return new RedisLockSemaphoreStore($this->url);
    }

    protected function lockStore(): LockStore
    {
        return new RedisLockStore($this->url);
    }
}

return [
    'make' => fn (Endpoint $redis) => new SymfonyRedislockPrimitives($redis->url()),
    'skip' => function (string $workload): ?string {
        if (!extension_loaded('redislock')) {
            return 'the redislock extension is not loaded';
        }
        if ($workload === 'rw' && !is_subclass_of(RedisLockStore::class, SharedLockStoreInterface::class)) {
            return 'the bridge\'s RedisLockStore does not implement SharedLockStoreInterface yet '
                . '(Symfony\'s acquireRead() would take a write lock)';
        }
        return null;
    },
];

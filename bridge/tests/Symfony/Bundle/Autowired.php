<?php

namespace RedisLock\Bridge\Tests\Symfony\Bundle;

use RedisLock\Bridge\Symfony\RedisLockSemaphoreStore;
use RedisLock\Bridge\Symfony\RedisLockStore;
use Symfony\Component\Lock\LockFactory;
use Symfony\Component\Semaphore\SemaphoreFactory;

/**
 * An application service that asks for what the bundle offers by type
 * and argument name, as a controller or a command would; null where the
 * container has nothing for it.
 */
final class Autowired
{
    public function __construct(
        public readonly ?LockFactory $lockFactory = null,
        public readonly ?LockFactory $redislockLockFactory = null,
        public readonly ?SemaphoreFactory $semaphoreFactory = null,
        public readonly ?SemaphoreFactory $redislockSemaphoreFactory = null,
        public readonly ?RedisLockStore $lockStore = null,
        public readonly ?RedisLockSemaphoreStore $semaphoreStore = null,
    ) {
    }
}

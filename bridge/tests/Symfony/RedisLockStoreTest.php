<?php

namespace RedisLock\Bridge\Tests\Symfony;

use RedisLock\Bridge\Symfony\RedisLockStore;
use Symfony\Component\Lock\PersistingStoreInterface;

/** The store contract, expiry and blocking, on one local redis-server. */
final class RedisLockStoreTest extends AbstractStoreTestCase
{
    use BlockingStoreTestTrait;
    use ExpiringStoreTestTrait;

    protected function getStore(): PersistingStoreInterface
    {
        return new RedisLockStore(bridge_test_server()->url());
    }
}

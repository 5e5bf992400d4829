<?php

namespace RedisLock\Bridge\Tests\Symfony;

use RedisLock\Bridge\Symfony\RedisLockSemaphoreStore;
use Symfony\Component\Semaphore\PersistingStoreInterface;
use Symfony\Component\Semaphore\Tests\Store\AbstractStoreTestCase;

/**
 * Symfony's own semaphore store contract (`AbstractStoreTestCase` of the
 * installed Symfony, 5.4 on Debian 12), unchanged, against the bridge's
 * store: save / exists / delete, limits, weights, putOffExpiration and the
 * expiry message. scripts/symfony-store-tests.sh fetches the file from
 * Debian's source package; it is not part of this repository.
 */
final class SymfonyStoreContractTest extends AbstractStoreTestCase
{
    protected function getStore(): PersistingStoreInterface
    {
        return new RedisLockSemaphoreStore(bridge_test_server()->url());
    }
}

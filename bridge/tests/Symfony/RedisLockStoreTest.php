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

    /** One owner for every Key would let one Key's release end another's hold. */
    public function testOwnerOptionIsRefused(): void
    {
        $this->expectException(\InvalidArgumentException::class);
        $this->expectExceptionMessage('"owner" is not supported');
        new RedisLockStore(bridge_test_server()->url(), ['owner' => 'shared']);
    }
}

<?php

namespace RedisLock\Bridge\Tests\Symfony;

use RedisLock\Bridge\Symfony\RedisLockStore;
use Symfony\Component\Lock\Key;
use Symfony\Component\Lock\PersistingStoreInterface;

/** The store contract, expiry, blocking and shared locks, on one local redis-server. */
final class RedisLockStoreTest extends AbstractStoreTestCase
{
    use BlockingStoreTestTrait;
    use ExpiringStoreTestTrait;
    use SharedLockStoreTestTrait;

    protected function getStore(): PersistingStoreInterface
    {
        return new RedisLockStore(bridge_test_server()->url());
    }

    /**
     * save() on a Key whose read lock ran out takes the write lock, as
     * Symfony's RedisStore does: there is nothing left to promote (the
     * extension's acquire() returned false at once there).
     */
    public function testSaveAfterTheReadLockRanOut(): void
    {
        $store = new RedisLockStore(bridge_test_server()->url(), [], 0.3);
        $key = new Key(self::resource('read-ran-out'));
        $store->saveRead($key);
        usleep(400000);
        $key->resetLifetime();   // as Lock::acquire() does
        $store->save($key);
        $store->putOffExpiration($key, 30);
        $this->assertTrue($store->exists($key), 'the write lock is the Key\'s');
        $this->assertStringStartsNotWith('~~read', redis_cmd(bridge_test_server()->url(), 'GET', (string) $key));
        $store->delete($key);
        $this->assertFalse($store->exists($key));
    }

    /** One owner for every Key would let one Key's release end another's hold. */
    public function testOwnerOptionIsRefused(): void
    {
        $this->expectException(\InvalidArgumentException::class);
        $this->expectExceptionMessage('"owner" is not supported');
        new RedisLockStore(bridge_test_server()->url(), ['owner' => 'shared']);
    }
}

<?php

namespace RedisLock\Bridge\Tests\Symfony;

use Symfony\Component\Lock\Exception\LockConflictedException;
use Symfony\Component\Lock\Exception\LockExpiredException;
use Symfony\Component\Lock\Key;

/**
 * Expiry, in the shape of Symfony's ExpiringStoreTestTrait: a lease runs
 * out, a lease too short to be stored is reported as expired, putting off
 * the expiration extends it, and an expired lock can be taken again.
 */
trait ExpiringStoreTestTrait
{
    /** The delay the tests allow for a round trip and the server's clock, in µs. */
    protected function getClockDelay(): int
    {
        return 250000;
    }

    public function testExpiration(): void
    {
        $delay = $this->getClockDelay();
        $store = $this->getStore();
        $key = new Key(self::resource('expiration'));
        $store->save($key);
        $store->putOffExpiration($key, 2 * $delay / 1e6);
        $this->assertTrue($store->exists($key));
        usleep(3 * $delay);
        $this->assertFalse($store->exists($key));
    }

    public function testAbortAfterExpiration(): void
    {
        $store = $this->getStore();
        $key = new Key(self::resource('abort'));
        $store->save($key);
        $this->expectException(LockExpiredException::class);
        $store->putOffExpiration($key, 1 / 1e6);
    }

    public function testRefreshLock(): void
    {
        $delay = $this->getClockDelay();
        $store = $this->getStore();
        $key = new Key(self::resource('refresh'));
        $store->save($key);
        $store->putOffExpiration($key, 2 * $delay / 1e6);
        usleep($delay);
        $store->putOffExpiration($key, 3 * $delay / 1e6);
        usleep(2 * $delay);
        $this->assertTrue($store->exists($key), 'the second putOffExpiration extended the lease');
        usleep(2 * $delay);
        $this->assertFalse($store->exists($key));
    }

    public function testSetExpiration(): void
    {
        $store = $this->getStore();
        $key = new Key(self::resource('set-expiration'));
        $store->save($key);
        $store->putOffExpiration($key, 1.0);
        $this->assertGreaterThanOrEqual(0, $key->getRemainingLifetime());
        $this->assertLessThanOrEqual(1, $key->getRemainingLifetime());
        $store->delete($key);
    }

    public function testExpiredLockCleaned(): void
    {
        $delay = $this->getClockDelay();
        $store = $this->getStore();
        $resource = self::resource('cleaned');
        $key1 = new Key($resource);
        $store->save($key1);
        $store->putOffExpiration($key1, $delay / 1e6);
        usleep(2 * $delay);
        $this->assertFalse($store->exists($key1));
        $key2 = new Key($resource);
        $store->save($key2);
        $this->assertTrue($store->exists($key2), 'an expired lock can be taken again');
        $this->expectException(LockConflictedException::class);
        try {
            $key1->resetLifetime(); // as Lock::refresh() does
            $store->putOffExpiration($key1, 1.0);
        } finally {
            $this->assertTrue($store->exists($key2), 'the lost key did not touch the new holder');
            $store->delete($key2);
        }
    }
}

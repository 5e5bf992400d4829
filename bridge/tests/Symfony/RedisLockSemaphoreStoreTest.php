<?php

namespace RedisLock\Bridge\Tests\Symfony;

use PHPUnit\Framework\TestCase;
use RedisLock\Bridge\Symfony\RedisLockSemaphoreStore;
use Symfony\Component\Semaphore\Exception\InvalidArgumentException;
use Symfony\Component\Semaphore\Exception\SemaphoreAcquiringException;
use Symfony\Component\Semaphore\Exception\SemaphoreExpiredException;
use Symfony\Component\Semaphore\Key;
use Symfony\Component\Semaphore\PersistingStoreInterface;

/**
 * The contract of a Symfony Semaphore store, in the shape of Symfony's own
 * semaphore store tests: save / exists / delete, resources kept apart,
 * saving up to the limit (the limit+1-th Key fails, a delete frees a
 * permit), saving twice, deleting another Key's permit, putOffExpiration,
 * expiry, weights; and what this store adds: a weight above 1,000 and a
 * limit that disagrees with Redis are refused with Symfony's exception
 * types. Symfony's own tests run unchanged in SymfonyStoreContractTest.
 */
final class RedisLockSemaphoreStoreTest extends TestCase
{
    private function getStore(): PersistingStoreInterface
    {
        return new RedisLockSemaphoreStore(bridge_test_server()->url());
    }

    private static function resource(string $name): string
    {
        return redislock_test_key("symfony-semaphore-$name");
    }

    public function testSaveExistAndDelete(): void
    {
        $store = $this->getStore();
        $key = new Key(self::resource('save'), 1);
        $this->assertFalse($store->exists($key));
        $store->save($key, 10);
        $this->assertTrue($store->exists($key));
        $store->delete($key);
        $this->assertFalse($store->exists($key));
    }

    public function testSaveWithDifferentResources(): void
    {
        $store = $this->getStore();
        $key1 = new Key(self::resource('resource-1'), 1);
        $key2 = new Key(self::resource('resource-2'), 1);
        $store->save($key1, 10);
        $this->assertTrue($store->exists($key1));
        $this->assertFalse($store->exists($key2));
        $store->save($key2, 10);
        $this->assertTrue($store->exists($key1));
        $this->assertTrue($store->exists($key2));
        $store->delete($key1);
        $this->assertFalse($store->exists($key1));
        $this->assertTrue($store->exists($key2));
        $store->delete($key2);
        $this->assertFalse($store->exists($key2));
    }

    public function testSaveWithDifferentKeysOnSameResource(): void
    {
        $store = $this->getStore();
        $resource = self::resource('same-resource');
        $key1 = new Key($resource, 1);
        $key2 = new Key($resource, 1);
        $store->save($key1, 10);
        $this->assertTrue($store->exists($key1));
        $this->assertFalse($store->exists($key2));
        try {
            $store->save($key2, 10);
            $this->fail('The store saved a second Key on a semaphore of 1');
        } catch (SemaphoreAcquiringException) {
            $this->assertTrue($store->exists($key1));
            $this->assertFalse($store->exists($key2));
        }
        $store->delete($key1);
        $this->assertFalse($store->exists($key1));
        $store->save($key2, 10);
        $this->assertTrue($store->exists($key2));
        $store->delete($key2);
    }

    /** Saving up to the limit: the limit+1-th Key fails, and a delete lets it in. */
    public function testSaveUpToTheLimit(): void
    {
        $store = $this->getStore();
        $resource = self::resource('limit-3');
        $keys = [new Key($resource, 3), new Key($resource, 3), new Key($resource, 3)];
        foreach ($keys as $key) {
            $store->save($key, 10);
        }
        $fourth = new Key($resource, 3);
        try {
            $store->save($fourth, 10);
            $this->fail('The store saved a fourth Key on a semaphore of 3');
        } catch (SemaphoreAcquiringException $e) {
            $this->assertStringContainsString('1 of its 3 permits are not free', $e->getMessage());
        }
        $this->assertFalse($store->exists($fourth));
        foreach ($keys as $key) {
            $this->assertTrue($store->exists($key));
        }
        $store->delete($keys[1]);
        $store->save($fourth, 10);
        $this->assertTrue($store->exists($fourth));
        $this->assertFalse($store->exists($keys[1]));
        foreach ([$keys[0], $keys[2], $fourth] as $key) {
            $store->delete($key);
        }
        $this->assertSame(0, redis_cmd(bridge_test_server()->url(), 'ZCOUNT', "$resource~~s", '(0', '+inf'), 'every permit given back');
    }

    public function testSaveTwice(): void
    {
        $store = $this->getStore();
        $key = new Key(self::resource('twice'), 1);
        $store->save($key, 10);
        $store->save($key, 10);
        $this->assertTrue($store->exists($key));
        $store->delete($key);
        $this->assertFalse($store->exists($key));
    }

    public function testDeleteIsolated(): void
    {
        $store = $this->getStore();
        $resource = self::resource('delete-isolated');
        $key1 = new Key($resource, 2);
        $key2 = new Key($resource, 2);
        $store->save($key1, 10);
        $store->delete($key2);
        $this->assertTrue($store->exists($key1), 'deleting a Key that holds nothing left the permit alone');
        $store->delete($key1);
        $this->assertFalse($store->exists($key1));
    }

    public function testPutOffExpiration(): void
    {
        $store = $this->getStore();
        $resource = self::resource('put-off');
        $key = new Key($resource, 2);
        $store->save($key, 0.5);
        $store->putOffExpiration($key, 20);
        usleep(1_200_000);   // the first lease and the extension's 0.5 s clock grace
        $this->assertTrue($store->exists($key), 'the lease was extended');
        $store->delete($key);
    }

    public function testPutOffExpirationWhenSaveHasNotBeenCalled(): void
    {
        $store = $this->getStore();
        $key = new Key(self::resource('put-off-unsaved'), 2);
        $this->expectException(SemaphoreExpiredException::class);
        $this->expectExceptionMessage('has expired: the script returns a positive number');
        $store->putOffExpiration($key, 20);
    }

    /** A lease runs out (plus the 0.5 s grace): the permit is no longer the Key's, and another Key gets it. */
    public function testExpiration(): void
    {
        $store = $this->getStore();
        $resource = self::resource('expiration');
        $key1 = new Key($resource, 1);
        $store->save($key1, 0.2);
        $this->assertTrue($store->exists($key1));
        usleep(900_000);
        $this->assertFalse($store->exists($key1));
        $key2 = new Key($resource, 1);
        $store->save($key2, 10);
        $this->assertTrue($store->exists($key2), 'an expired permit can be taken again');
        try {
            $store->putOffExpiration($key1, 10);
            $this->fail('the expired Key extended a permit it no longer holds');
        } catch (SemaphoreExpiredException) {
            $this->assertTrue($store->exists($key2), 'the expired Key did not touch the new holder');
        }
        $store->delete($key2);
    }

    /** A Key's weight is taken at once: two Keys of weight 2 fill a limit of 4, a third waits for a delete. */
    public function testWeightIsTakenAtOnce(): void
    {
        $store = $this->getStore();
        $resource = self::resource('weight');
        $heavy = new Key($resource, 4, 3);
        $store->save($heavy, 10);
        $light = new Key($resource, 4, 2);
        try {
            $store->save($light, 10);
            $this->fail('a Key of weight 2 was saved with 1 permit free');
        } catch (SemaphoreAcquiringException $e) {
            $this->assertStringContainsString('2 of its 4 permits are not free', $e->getMessage());
        }
        $this->assertFalse($store->exists($light));
        $store->save(new Key($resource, 4, 1), 10);   // the last free permit
        $store->delete($heavy);
        $store->save($light, 10);
        $this->assertTrue($store->exists($light), 'the heavy Key gave its 3 permits back at once');
        $store->delete($light);
    }

    /** The extension takes at most 1,000 permits at once: a heavier Key is refused, clearly. */
    public function testWeightAboveTheMaximumIsRefused(): void
    {
        $store = $this->getStore();
        $key = new Key(self::resource('weight-max'), 2000, 1001);
        $this->expectException(InvalidArgumentException::class);
        $this->expectExceptionMessage('takes at most 1000 permits at once');
        $store->save($key, 10);
    }

    /** Two users disagree about the limit: the second Key is not saved, and says why. */
    public function testLimitDisagreementIsAnAcquiringException(): void
    {
        $store = $this->getStore();
        $resource = self::resource('disagree');
        $key = new Key($resource, 2);
        $store->save($key, 10);
        try {
            $store->save(new Key($resource, 5), 10);
            $this->fail('a Key with another limit was saved');
        } catch (SemaphoreAcquiringException $e) {
            $this->assertStringContainsString('has 2 permits in Redis, but this object was built with 5', $e->getMessage());
        }
        $store->delete($key);
    }

    public function testTtlMustBePositive(): void
    {
        $this->expectException(InvalidArgumentException::class);
        $this->getStore()->save(new Key(self::resource('ttl'), 1), 0);
    }
}

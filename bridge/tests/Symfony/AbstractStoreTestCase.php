<?php

namespace RedisLock\Bridge\Tests\Symfony;

use PHPUnit\Framework\TestCase;
use Symfony\Component\Lock\Exception\LockConflictedException;
use Symfony\Component\Lock\Key;
use Symfony\Component\Lock\PersistingStoreInterface;

/**
 * The contract every Symfony Lock store meets, in the shape of Symfony's
 * own AbstractStoreTest: save / exists / delete, resources kept apart, two
 * keys on one resource excluding each other, saving twice, deleting
 * another key's lock.
 */
abstract class AbstractStoreTestCase extends TestCase
{
    /** A fresh store on the test Redis. */
    abstract protected function getStore(): PersistingStoreInterface;

    /** A resource name no other test uses. */
    protected static function resource(string $name): string
    {
        return redislock_test_key("symfony-$name");
    }

    public function testSave(): void
    {
        $store = $this->getStore();
        $key = new Key(self::resource('save'));
        $this->assertFalse($store->exists($key));
        $store->save($key);
        $this->assertTrue($store->exists($key));
        $store->delete($key);
        $this->assertFalse($store->exists($key));
    }

    public function testSaveWithDifferentResources(): void
    {
        $store = $this->getStore();
        $key1 = new Key(self::resource('resource-1'));
        $key2 = new Key(self::resource('resource-2'));
        $store->save($key1);
        $this->assertTrue($store->exists($key1));
        $this->assertFalse($store->exists($key2));
        $store->save($key2);
        $this->assertTrue($store->exists($key1));
        $this->assertTrue($store->exists($key2));
        $store->delete($key1);
        $this->assertFalse($store->exists($key1));
        $this->assertTrue($store->exists($key2));
        $store->delete($key2);
        $this->assertFalse($store->exists($key2));
    }

    public function testSaveWithDifferentKeysOnSameResources(): void
    {
        $store = $this->getStore();
        $resource = self::resource('same-resource');
        $key1 = new Key($resource);
        $key2 = new Key($resource);
        $store->save($key1);
        $this->assertTrue($store->exists($key1));
        $this->assertFalse($store->exists($key2));
        try {
            $store->save($key2);
            $this->fail('The store saved a second key on a held resource');
        } catch (LockConflictedException) {
            $this->assertTrue($store->exists($key1));
            $this->assertFalse($store->exists($key2));
        }
        $store->delete($key1);
        $this->assertFalse($store->exists($key1));
        $store->save($key2);
        $this->assertTrue($store->exists($key2));
        $store->delete($key2);
    }

    public function testSaveTwice(): void
    {
        $store = $this->getStore();
        $key = new Key(self::resource('twice'));
        $store->save($key);
        $store->save($key);
        $this->assertTrue($store->exists($key));
        $store->delete($key);
        $this->assertFalse($store->exists($key));
    }

    public function testDeleteIsolated(): void
    {
        $store = $this->getStore();
        $resource = self::resource('delete-isolated');
        $key1 = new Key($resource);
        $key2 = new Key($resource);
        $store->save($key1);
        $store->delete($key2);
        $this->assertTrue($store->exists($key1), 'deleting another key left the lock alone');
        $store->delete($key1);
        $this->assertFalse($store->exists($key1));
    }
}

<?php

namespace RedisLock\Bridge\Tests\Symfony;

use Symfony\Component\Lock\Exception\LockConflictedException;
use Symfony\Component\Lock\Key;
use Symfony\Component\Lock\SharedLockStoreInterface;

/**
 * Shared (read) locks, in the shape of Symfony's SharedLockStoreTestTrait
 * (symfony/lock Tests/Store/SharedLockStoreTestTrait.php, the same cases in
 * 5.4 and 6.4; Debian's php-symfony-lock does not ship Symfony's tests):
 * readers first then a writer, a writer first then a reader, a promotion
 * refused beside another reader, a promotion allowed to the only reader,
 * a demotion that lets other readers in. Each case also checks that a
 * refused save leaves the holds as they were, and leaves nothing held.
 */
trait SharedLockStoreTestTrait
{
    /** The store under test, a shared-lock store. */
    private function sharedStore(): SharedLockStoreInterface
    {
        $store = $this->getStore();
        $this->assertInstanceOf(SharedLockStoreInterface::class, $store);

        return $store;
    }

    /**
     * Asserts which of the keys the store reports as held.
     *
     * @param array<int, Key>  $keys
     * @param array<int, bool> $held one per key
     */
    private function assertHeld(SharedLockStoreInterface $store, array $keys, array $held, string $when): void
    {
        $seen = array_map(fn (Key $key) => $store->exists($key), $keys);
        $this->assertSame($held, $seen, "held keys $when");
    }

    /** Calls $save, which must be refused with LockConflictedException. */
    private function assertConflicted(callable $save, string $what): void
    {
        try {
            $save();
            $this->fail("the store allowed $what");
        } catch (LockConflictedException) {
            $this->addToAssertionCount(1);
        }
    }

    public function testSharedLockReadFirst(): void
    {
        $store = $this->sharedStore();
        $resource = self::resource('shared-read-first');
        $keys = [new Key($resource), new Key($resource), new Key($resource)];
        [$reader1, $reader2, $writer] = $keys;

        $store->saveRead($reader1);
        $this->assertHeld($store, $keys, [true, false, false], 'after the first reader');
        $store->saveRead($reader2);
        $this->assertHeld($store, $keys, [true, true, false], 'after the second reader');

        $this->assertConflicted(fn () => $store->save($writer), 'a writer beside two readers');
        $this->assertHeld($store, $keys, [true, true, false], 'after the refused writer');

        $store->delete($reader1);
        $this->assertHeld($store, $keys, [false, true, false], 'after the first reader left');
        $store->delete($reader2);
        $this->assertHeld($store, $keys, [false, false, false], 'after both readers left');

        $store->save($writer);
        $this->assertHeld($store, $keys, [false, false, true], 'after the writer came in');
        $store->delete($writer);
        $this->assertHeld($store, $keys, [false, false, false], 'at the end');
    }

    public function testSharedLockWriteFirst(): void
    {
        $store = $this->sharedStore();
        $resource = self::resource('shared-write-first');
        $keys = [new Key($resource), new Key($resource)];
        [$writer, $reader] = $keys;

        $store->save($writer);
        $this->assertHeld($store, $keys, [true, false], 'after the writer');
        $this->assertConflicted(fn () => $store->saveRead($reader), 'a reader beside a writer');
        $this->assertHeld($store, $keys, [true, false], 'after the refused reader');

        $store->delete($writer);
        $this->assertHeld($store, $keys, [false, false], 'after the writer left');
        $store->save($reader);
        $this->assertHeld($store, $keys, [false, true], 'after the second key wrote');
        $store->delete($reader);
        $this->assertHeld($store, $keys, [false, false], 'at the end');
    }

    public function testSharedLockPromote(): void
    {
        $store = $this->sharedStore();
        $resource = self::resource('shared-promote');
        $keys = [new Key($resource), new Key($resource)];
        [$promoting, $other] = $keys;

        $store->saveRead($promoting);
        $store->saveRead($other);
        $this->assertHeld($store, $keys, [true, true], 'after two readers');
        $this->assertConflicted(fn () => $store->save($promoting), 'a promotion beside another reader');
        $this->assertHeld($store, $keys, [true, true], 'after the refused promotion (both still read)');

        $store->delete($promoting);
        $store->delete($other);
        $this->assertHeld($store, $keys, [false, false], 'at the end');
    }

    public function testSharedLockPromoteAllowed(): void
    {
        $store = $this->sharedStore();
        $resource = self::resource('shared-promote-allowed');
        $keys = [new Key($resource), new Key($resource)];
        [$promoted, $reader] = $keys;

        $store->saveRead($promoted);
        $store->save($promoted);
        $this->assertConflicted(fn () => $store->saveRead($reader), 'a reader beside the promoted writer');
        $this->assertHeld($store, $keys, [true, false], 'after the refused reader');

        $store->delete($promoted);
        $store->saveRead($reader);
        $this->assertHeld($store, $keys, [false, true], 'after the writer left and the reader came in');
        $store->delete($reader);
    }

    public function testSharedLockDemote(): void
    {
        $store = $this->sharedStore();
        $resource = self::resource('shared-demote');
        $keys = [new Key($resource), new Key($resource)];
        [$demoted, $reader] = $keys;

        $store->save($demoted);
        $store->saveRead($demoted);
        $store->saveRead($reader);
        $this->assertHeld($store, $keys, [true, true], 'after the demotion and a second reader');

        $store->delete($demoted);
        $store->delete($reader);
        $this->assertHeld($store, $keys, [false, false], 'at the end');
    }
}

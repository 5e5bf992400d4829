<?php

namespace RedisLock\Bridge\Tests\Laravel;

use Illuminate\Contracts\Cache\LockTimeoutException;
use Illuminate\Support\Facades\Cache;
use RedisLock\Bridge\Laravel\RedisLockLock;

/**
 * The lock API through Laravel's Cache facade, after the patterns of
 * Laravel's own Redis cache lock integration tests (acquire/release, block,
 * safe release after expiry, failed callbacks, owner tokens, isLocked,
 * isOwnedBy, refresh), plus what the redislock driver adds: exclusion in one
 * process, block() timing, and the auto-renewed lease of `$seconds = 0`.
 */
class RedisLockCacheLockTest extends LaravelTestCase
{
    /** Both Cache::lock() (default store) and Cache::store()->lock() give our lock. */
    public function testCacheLockReturnsTheRedisLockDriversLock(): void
    {
        $this->assertInstanceOf(RedisLockLock::class, Cache::lock('foo', 10));
        $this->assertInstanceOf(RedisLockLock::class, Cache::store('locks')->lock('foo', 10));
        $this->assertInstanceOf(RedisLockLock::class, Cache::store('locks')->restoreLock('foo', 'someone'));
        $this->assertSame($this->prefix, Cache::store('locks')->getPrefix());
    }

    /** The Redis key is prefix . name, its value the owner, its lease $seconds. */
    public function testLockKeyHoldsTheOwnerWithTheLease(): void
    {
        $lock = Cache::lock('foo', 10);
        $this->assertTrue($lock->get());

        $this->assertSame($lock->owner(), $this->redis('GET', $this->prefix . 'foo'));
        $this->assertGreaterThan(9000, $this->pttl('foo'));
        $this->assertLessThanOrEqual(10000, $this->pttl('foo'));

        $this->assertTrue($lock->release());
        $this->assertSame(-2, $this->pttl('foo'));
    }

    /** Laravel: locks can be acquired and released; a second lock on the name fails, in one process too. */
    public function testLocksCanBeAcquiredAndReleased(): void
    {
        Cache::lock('foo')->forceRelease();

        $lock = Cache::lock('foo', 10);
        $this->assertTrue($lock->get());
        $this->assertFalse(Cache::lock('foo', 10)->get());
        $this->assertFalse($lock->get(), 'the holder itself does not re-enter');
        $this->assertTrue($lock->release());
        $this->assertFalse($lock->release(), 'released twice');

        $lock = Cache::lock('foo', 10);
        $this->assertTrue($lock->get());
        $this->assertFalse(Cache::lock('foo', 10)->get());
        $this->assertFalse(Cache::lock('foo')->release(), 'another owner cannot release it');
        $this->assertTrue($lock->isOwnedByCurrentProcess());
        $this->assertTrue($lock->release());
    }

    /** A lock restored with the holder's owner does not acquire a held lock either (like SET NX). */
    public function testRestoredLockOfTheHolderDoesNotAcquireAgain(): void
    {
        $lock = Cache::lock('foo', 10);
        $this->assertTrue($lock->get());
        $this->assertFalse(Cache::restoreLock('foo', $lock->owner())->get());
        $this->assertTrue($lock->release());
    }

    /** get() with a callback runs it, releases, and returns its value. */
    public function testGetWithCallbackReleases(): void
    {
        $this->assertSame('done', Cache::lock('foo', 10)->get(function () {
            $this->assertTrue(Cache::lock('foo')->isLocked());

            return 'done';
        }));
        $this->assertFalse(Cache::lock('foo')->isLocked());

        $held = Cache::lock('foo', 10);
        $this->assertTrue($held->get());
        $this->assertFalse(Cache::lock('foo', 10)->get(fn () => $this->fail('ran without the lock')));
        $held->release();
    }

    /** Laravel: locks can block for seconds, with and without a callback. */
    public function testLocksCanBlockForSeconds(): void
    {
        Cache::lock('foo')->forceRelease();
        $this->assertSame('taylor', Cache::lock('foo', 10)->block(1, function () {
            return 'taylor';
        }));
        $this->assertFalse(Cache::lock('foo')->isLocked(), 'block() released after the callback');

        Cache::lock('foo')->forceRelease();
        $lock = Cache::lock('foo', 10);
        $this->assertTrue($lock->block(1));
        $this->assertTrue($lock->isOwnedByCurrentProcess());
        $this->assertTrue($lock->release());
    }

    /** block() throws Laravel's LockTimeoutException when the wait runs out, after about that long. */
    public function testBlockTimesOut(): void
    {
        $holder = Cache::lock('foo', 10);
        $this->assertTrue($holder->get());

        $start = hrtime(true);
        try {
            Cache::lock('foo', 10)->block(0.5, fn () => $this->fail('ran without the lock'));
            $this->fail('block() did not time out');
        } catch (LockTimeoutException) {
            $elapsed = self::since($start);
        }
        $this->assertGreaterThanOrEqual(0.49, $elapsed);
        $this->assertLessThan(1.0, $elapsed);
        $this->assertTrue($holder->isOwnedByCurrentProcess(), 'the holder still holds it');

        $start = hrtime(true);
        try {
            Cache::lock('foo', 10)->block(0);
            $this->fail('block(0) did not time out');
        } catch (LockTimeoutException) {
            $this->assertLessThan(0.2, self::since($start));
        }
        $holder->release();
    }

    /** Laravel: after our lease ran out and another owner took the lock, our release deletes nothing. */
    public function testConcurrentLocksAreReleasedSafely(): void
    {
        Cache::lock('foo')->forceRelease();

        $firstLock = Cache::lock('foo', 1);
        $this->assertTrue($firstLock->get());
        usleep(1_100_000);  // past the 1 s lease

        $secondLock = Cache::lock('foo', 10);
        $this->assertTrue($secondLock->get());

        $this->assertFalse($firstLock->release());

        $this->assertFalse(Cache::lock('foo')->get());
        $this->assertTrue($secondLock->isOwnedByCurrentProcess());
        $this->assertSame($secondLock->owner(), $this->redis('GET', $this->prefix . 'foo'));
        $secondLock->release();
    }

    /** Laravel: a block() callback that throws releases the lock; the exception reaches the caller. */
    public function testLocksWithFailedBlockCallbackAreReleased(): void
    {
        Cache::lock('foo')->forceRelease();

        $firstLock = Cache::lock('foo', 10);
        $thrown = new \RuntimeException('failed');
        try {
            $firstLock->block(1, function () use ($thrown) {
                throw $thrown;
            });
            $this->fail('the exception did not reach the caller');
        } catch (\RuntimeException $e) {
            $this->assertSame($thrown, $e);
        }

        $secondLock = Cache::lock('foo', 1);
        $this->assertTrue($secondLock->get());
        $secondLock->release();
    }

    /** Laravel: a lock restored from its owner releases it; another owner cannot. */
    public function testLocksCanBeReleasedUsingOwnerToken(): void
    {
        Cache::lock('foo')->forceRelease();

        $firstLock = Cache::lock('foo', 10);
        $this->assertTrue($firstLock->get());
        $owner = $firstLock->owner();

        $this->assertFalse(Cache::restoreLock('foo', 'other_owner')->release());
        $this->assertTrue(Cache::lock('foo')->isLocked());

        $secondLock = Cache::store('locks')->restoreLock('foo', $owner);
        $this->assertTrue($secondLock->release());

        $this->assertTrue(Cache::lock('foo')->get());
    }

    /** Laravel: the owner's status can be checked after restoring the lock. */
    public function testOwnerStatusCanBeCheckedAfterRestoringLock(): void
    {
        Cache::lock('foo')->forceRelease();

        $firstLock = Cache::lock('foo', 10);
        $this->assertTrue($firstLock->get());
        $owner = $firstLock->owner();

        $secondLock = Cache::restoreLock('foo', $owner);
        $this->assertTrue($secondLock->isOwnedByCurrentProcess());
        $firstLock->release();
        $this->assertFalse($secondLock->isOwnedByCurrentProcess());
    }

    /** Laravel: isLocked() reports any holder. */
    public function testIsLocked(): void
    {
        Cache::lock('foo')->forceRelease();

        $lock = Cache::lock('foo', 10);
        $this->assertFalse($lock->isLocked());

        $lock->get();
        $this->assertTrue($lock->isLocked());
        $this->assertTrue(Cache::lock('foo')->isLocked(), 'seen by a lock of another owner');

        $lock->release();
        $this->assertFalse($lock->isLocked());
    }

    /** Laravel: another owner does not own the lock after restore; isOwnedBy(null) means free. */
    public function testOtherOwnerDoesNotOwnLockAfterRestore(): void
    {
        Cache::lock('foo')->forceRelease();

        $firstLock = Cache::lock('foo', 10);
        $this->assertTrue($firstLock->isOwnedBy(null));
        $this->assertTrue($firstLock->get());
        $this->assertTrue($firstLock->isOwnedBy($firstLock->owner()));
        $this->assertFalse($firstLock->isOwnedBy(null));
        $this->assertFalse($firstLock->isOwnedBy('other_owner'));
        $this->assertFalse($firstLock->isOwnedBy(''));

        $secondLock = Cache::restoreLock('foo', 'other_owner');
        $this->assertTrue($secondLock->isOwnedBy($firstLock->owner()));
        $this->assertFalse($secondLock->isOwnedByCurrentProcess());
        $firstLock->release();
    }

    /** getCurrentOwner(): our owner when ours, '' when another owner's, null when free. */
    public function testCurrentOwner(): void
    {
        $lock = Cache::lock('foo', 10);
        $other = Cache::lock('foo', 10);
        $currentOwner = fn (RedisLockLock $l) => (fn () => $this->getCurrentOwner())->call($l);

        $this->assertNull($currentOwner($lock));
        $this->assertTrue($lock->get());
        $this->assertSame($lock->owner(), $currentOwner($lock));
        $this->assertSame('', $currentOwner($other));
        $lock->release();
        $this->assertNull($currentOwner($other));
    }

    /** forceRelease() deletes the lock of any owner; the lock can then be taken. */
    public function testForceRelease(): void
    {
        $holder = Cache::lock('foo', 10);
        $this->assertTrue($holder->get());

        Cache::lock('foo')->forceRelease();
        $this->assertFalse(Cache::lock('foo')->isLocked());
        $this->assertFalse($holder->release(), 'the old holder has nothing left to release');

        $next = Cache::lock('foo', 10);
        $this->assertTrue($next->get());
        $holder->forceRelease();
        $this->assertFalse($next->isLocked());
        $this->assertTrue($holder->get(), 'the force-releasing object can acquire again');
        $holder->release();
    }

    /** Laravel: refresh() extends the lease; another owner cannot refresh. */
    public function testLockCanBeRefreshed(): void
    {
        $lock = Cache::lock('foo', 10);
        $this->assertTrue($lock->get());

        $this->assertTrue($lock->refresh(20));
        $this->assertGreaterThan(19000, $this->pttl('foo'));
        $this->assertFalse(Cache::lock('foo', 10)->get());

        $this->assertFalse(Cache::restoreLock('foo', 'other_owner')->refresh(20));
        $this->assertTrue(Cache::restoreLock('foo', $lock->owner())->refresh(30), 'the owner, restored');
        $this->assertGreaterThan(29000, $this->pttl('foo'));

        // Without seconds: the lock's own.
        $this->assertTrue($lock->refresh());
        $this->assertGreaterThan(9000, $this->pttl('foo'));
        $this->assertLessThanOrEqual(10000, $this->pttl('foo'));

        $this->assertTrue($lock->release());
        $this->assertFalse($lock->refresh(), 'nothing to refresh after the release');
    }

    /**
     * `$seconds = 0` (Laravel's "no expiry"): a 15 s lease in Redis, never
     * a key without expiry; released as usual. (The renewal itself is
     * tested with 0.6 s leases below, not by waiting 15 s.)
     */
    public function testNoExpiryIsAnAutoRenewedLease(): void
    {
        $lock = Cache::lock('foo');
        $this->assertTrue($lock->get());
        $this->assertGreaterThan(0, $this->pttl('foo'));
        $this->assertLessThanOrEqual(15000, $this->pttl('foo'));

        $this->assertTrue($lock->isOwnedByCurrentProcess());
        $this->assertFalse(Cache::lock('foo')->get());

        $this->assertTrue($lock->refresh(), 'refresh() of a no-expiry lock');
        $this->assertGreaterThan(14000, $this->pttl('foo'));
        $this->assertTrue($lock->release());
        $this->assertSame(-2, $this->pttl('foo'));
    }

    /**
     * The renewal of a `$seconds = 0` lock goes on after its object is gone
     * (as Laravel's lock outlives it), until released through restoreLock().
     * With a 0.6 s lease renewed every 0.2 s: still held after 1 s.
     */
    public function testNoExpiryLockIsRenewedAfterItsObjectIsGone(): void
    {
        $this->assertTrue(Cache::store('locks_short_renew')->lock('foo', 0, 'owner-1')->get());
        $this->assertLessThanOrEqual(600, $this->pttl('foo'));

        usleep(1_000_000);
        $lock = Cache::store('locks_short_renew')->restoreLock('foo', 'owner-1');
        $this->assertTrue($lock->isOwnedByCurrentProcess(), 'renewed past its lease');
        $this->assertGreaterThan(0, $this->pttl('foo'));
        $this->assertLessThanOrEqual(600, $this->pttl('foo'));

        $this->assertTrue($lock->release());
        $this->assertFalse($lock->isLocked());
    }

    /**
     * A `$seconds = 0` lock whose object is gone is renewed until a
     * restoreLock() release, and not after: the same owner's key set again
     * behind our back keeps the lease it was given (a renewal would cut it
     * to 0.6 s), and that release is not counted as a lost lease.
     */
    public function testRenewalStopsAtARestoreLockRelease(): void
    {
        $this->assertTrue(Cache::store('locks_short_renew')->lock('foo', 0, 'owner-1')->get());
        usleep(900_000);  // past its 0.6 s lease
        $this->assertGreaterThan(0, $this->pttl('foo'), 'renewed after its object is gone');

        $lost = \RedisLock::stats()['lost_leases'];
        $this->assertTrue(Cache::store('locks_short_renew')->restoreLock('foo', 'owner-1')->release());
        $this->assertSame(-2, $this->pttl('foo'));
        $this->redis('SET', $this->prefix . 'foo', 'owner-1', 'PX', '10000');
        usleep(500_000);  // two renewals would have run by now
        $this->assertGreaterThan(9000, $this->pttl('foo'), 'no renewal after the release');
        $this->assertSame($lost, \RedisLock::stats()['lost_leases'], 'released, not lost');
        $this->redis('DEL', $this->prefix . 'foo');
    }

    /**
     * refresh(0) (Laravel: remove the expiry) turns a lease into an
     * auto-renewed one; refresh(n) turns it back into a fixed lease.
     */
    public function testRefreshWithZeroSecondsKeepsTheLockRenewed(): void
    {
        $lock = Cache::store('locks_short_renew')->lock('foo', 1);
        $this->assertTrue($lock->get());
        $this->assertTrue($lock->refresh(0));
        $this->assertLessThanOrEqual(600, $this->pttl('foo'));

        usleep(1_100_000);  // past the 1 s lease and the 0.6 s lease
        $this->assertTrue($lock->isOwnedByCurrentProcess());
        $this->assertFalse(Cache::store('locks_short_renew')->lock('foo', 1)->get());

        $this->assertTrue($lock->refresh(20));
        $this->assertGreaterThan(19000, $this->pttl('foo'));
        usleep(300_000);  // a renewal would have run by now
        $this->assertGreaterThan(18000, $this->pttl('foo'), 'renewal stopped: the fixed lease stays');

        $this->assertFalse(Cache::store('locks_short_renew')->restoreLock('foo', 'other_owner')->refresh(0));
        $this->assertTrue($lock->release());
        $this->assertFalse($lock->isLocked());
    }
}

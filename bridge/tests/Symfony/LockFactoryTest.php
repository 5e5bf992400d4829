<?php

namespace RedisLock\Bridge\Tests\Symfony;

use PHPUnit\Framework\TestCase;
use RedisLock\Bridge\Symfony\RedisLockStore;
use Symfony\Component\Lock\Exception\LockConflictedException;
use Symfony\Component\Lock\Key;
use Symfony\Component\Lock\LockFactory;

/**
 * Symfony user code, unchanged, on the store: LockFactory locks acquire,
 * refresh, release, report a lease lost to expiry the way Symfony's stores
 * do, release on destruction, and travel to another process as a Key.
 */
final class LockFactoryTest extends TestCase
{
    private function factory(array $options = []): LockFactory
    {
        return new LockFactory(new RedisLockStore(bridge_test_server()->url(), $options));
    }

    public function testAcquireRefreshRelease(): void
    {
        $factory = $this->factory();
        $name = redislock_test_key('factory');
        $lock = $factory->createLock($name, 30);
        $this->assertTrue($lock->acquire());
        $this->assertTrue($lock->isAcquired());
        $this->assertFalse($factory->createLock($name)->acquire(), 'a second lock on the resource fails');
        $this->assertEqualsWithDelta(30, $lock->getRemainingLifetime(), 1);
        $lock->refresh(60);
        $this->assertEqualsWithDelta(60, $lock->getRemainingLifetime(), 1);
        $pttl = (int) redis_cmd(bridge_test_server()->url(), 'PTTL', $name);
        $this->assertGreaterThan(58000, $pttl, 'the lease in Redis follows refresh()');
        $lock->release();
        $this->assertFalse($lock->isAcquired());
        $this->assertSame(0, redis_cmd(bridge_test_server()->url(), 'EXISTS', $name));
    }

    public function testALeaseLostToExpiryIsReportedAsSymfonyStoresDo(): void
    {
        $name = redislock_test_key('factory-expired');
        $lock = $this->factory()->createLock($name, 0.2);
        $this->assertTrue($lock->acquire());
        usleep(300000);
        $this->assertTrue($lock->isExpired());
        $this->assertFalse($lock->isAcquired());
        $other = $this->factory()->createLock($name, 10);
        $this->assertTrue($other->acquire(), 'someone else takes the expired lock');
        $this->expectException(LockConflictedException::class);
        try {
            $lock->refresh();
        } finally {
            $this->assertTrue($other->isAcquired(), 'the lost lock did not disturb the new holder');
            $other->release();
        }
    }

    public function testAutoReleaseOnDestruction(): void
    {
        $name = redislock_test_key('factory-destruct');
        $lock = $this->factory()->createLock($name, 30);
        $this->assertTrue($lock->acquire());
        unset($lock);
        $this->assertTrue($this->factory()->createLock($name)->acquire(), 'released when the Lock was destroyed');
    }

    public function testBlockingAcquireIsWokenByTheRelease(): void
    {
        $name = redislock_test_key('factory-blocking');
        $holder = $this->factory()->createLock($name, 30);
        $this->assertTrue($holder->acquire());
        $report = tempnam(sys_get_temp_dir(), 'redislock-factory-');
        $pid = pcntl_fork();
        if ($pid === 0) {
            $lock = $this->factory()->createLock($name, 30);
            $lock->acquire(true);
            file_put_contents($report, (string) hrtime(true));
            $lock->release();
            posix_kill(posix_getpid(), SIGKILL);
        }
        $deadline = microtime(true) + 5;
        while ((int) redis_cmd(bridge_test_server()->url(), 'ZCARD', "$name~~q") === 0) {
            $this->assertLessThan($deadline, microtime(true), 'the child never queued');
            usleep(2000);
        }
        $released = hrtime(true);
        $holder->release();
        pcntl_waitpid($pid, $status);
        $acquired = (int) file_get_contents($report);
        unlink($report);
        $this->assertGreaterThan(0, $acquired, 'the child acquired');
        $this->assertLessThan(200, ($acquired - $released) / 1e6, 'woken by the release, not by a 100 ms poll');
    }

    public function testAKeyTravelsToAnotherProcess(): void
    {
        $name = redislock_test_key('factory-serialized');
        $factory = $this->factory(['auto_release' => false]);
        $key = new Key($name);
        $lock = $factory->createLockFromKey($key, 30, false);
        $this->assertTrue($lock->acquire());
        $serialized = serialize($key);
        $report = tempnam(sys_get_temp_dir(), 'redislock-key-');
        $pid = pcntl_fork();
        if ($pid === 0) {
            $theirs = $this->factory(['auto_release' => false])->createLockFromKey(unserialize($serialized), 30, false);
            $ok = $theirs->isAcquired();
            $theirs->release();
            file_put_contents($report, $ok ? 'held' : 'not held');
            posix_kill(posix_getpid(), SIGKILL);
        }
        pcntl_waitpid($pid, $status);
        $seen = file_get_contents($report);
        unlink($report);
        $this->assertSame('held', $seen, 'the other process saw the hold as its own');
        $this->assertSame(0, redis_cmd(bridge_test_server()->url(), 'EXISTS', $name), 'and released it');
    }
}

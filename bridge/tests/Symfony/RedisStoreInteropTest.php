<?php

namespace RedisLock\Bridge\Tests\Symfony;

use PHPUnit\Framework\TestCase;
use RedisLock\Bridge\Symfony\RedisLockStore;
use Symfony\Component\Lock\LockFactory;
use Symfony\Component\Lock\Store\RedisStore;

/**
 * Symfony's own RedisStore (phpredis) and RedisLockStore on the same
 * resource names, as during a switch from one to the other, worker by
 * worker: both use the resource name itself as the key (RedisStore a
 * sorted set, redislock a string), so each one's lock keeps the other
 * out, for write and read locks; a RedisStore waiter gets the lock at its
 * next poll after redislock's release; a redislock wait or read lock on a
 * name that RedisStore holds waits for it and enters once it is gone.
 */
final class RedisStoreInteropTest extends TestCase
{
    private static function url(): string
    {
        return bridge_test_server()->url();
    }

    private static function symfony(): LockFactory
    {
        $redis = new \Redis();
        $redis->connect('127.0.0.1', bridge_test_server()->port);

        return new LockFactory(new RedisStore($redis));
    }

    private static function ours(): LockFactory
    {
        return new LockFactory(new RedisLockStore(self::url()));
    }

    /** What an attempt did: "acquired", "refused", or the exception (class and message). */
    private static function attempt(callable $try): string
    {
        try {
            return $try() ? 'acquired' : 'refused';
        } catch (\Exception $e) {
            $previous = $e->getPrevious();

            return $e::class . ': ' . $e->getMessage()
                . ($previous === null ? '' : ' <- ' . $previous::class . ': ' . $previous->getMessage());
        }
    }

    public function testTheirLockKeepsOursOut(): void
    {
        $name = redislock_test_key('interop-theirs');
        $theirs = self::symfony()->createLock($name, 30);
        $this->assertTrue($theirs->acquire());
        $this->assertSame('zset', redis_cmd(self::url(), 'TYPE', $name));

        $mine = self::ours()->createLock($name, 30);
        $this->assertSame('refused', self::attempt(fn () => $mine->acquire()), 'our write lock');
        $this->assertNotSame('acquired', self::attempt(fn () => $mine->acquireRead()), 'our read lock');
        $this->assertSame('zset', redis_cmd(self::url(), 'TYPE', $name), 'their lock untouched');
        $this->assertTrue($theirs->isAcquired());

        $theirs->release();
        $this->assertTrue($mine->acquire(), 'ours once theirs is released');
        $mine->release();
    }

    public function testOurLockKeepsTheirsOut(): void
    {
        $name = redislock_test_key('interop-ours');
        $mine = self::ours()->createLock($name, 30);
        $this->assertTrue($mine->acquire());
        $this->assertSame('string', redis_cmd(self::url(), 'TYPE', $name));

        $theirs = self::symfony()->createLock($name, 30);
        $this->assertSame('refused', self::attempt(fn () => $theirs->acquire()), 'their write lock');
        $this->assertSame('refused', self::attempt(fn () => $theirs->acquireRead()), 'their read lock');
        $this->assertTrue($mine->isAcquired());

        $mine->release();
        $this->assertTrue($theirs->acquire(), 'theirs once ours is released');
        $theirs->release();
    }

    /** Read locks: ours (one reader, then two) keep their writer out; theirs keeps our writer out. */
    public function testReadLocksKeepTheOtherWriterOut(): void
    {
        $name = redislock_test_key('interop-read');
        $reader = self::ours()->createLock($name, 30);
        $this->assertTrue($reader->acquireRead());
        $this->assertSame('refused', self::attempt(fn () => self::symfony()->createLock($name, 30)->acquire()), 'one reader of ours');
        $second = self::ours()->createLock($name, 30);
        $this->assertTrue($second->acquireRead());
        $this->assertSame('refused', self::attempt(fn () => self::symfony()->createLock($name, 30)->acquire()), 'two readers of ours');
        $reader->release();
        $second->release();

        $theirReader = self::symfony()->createLock($name, 30);
        $this->assertTrue($theirReader->acquireRead());
        $this->assertSame('refused', self::attempt(fn () => self::ours()->createLock($name, 30)->acquire()), 'their reader');
        $theirReader->release();
    }

    /**
     * Every acquire of ours finds their sorted set held: a try and a read
     * try return false, a wait runs out, and none takes anything or
     * leaves anything behind; their lock stays. A blocking acquire waits
     * for their lock and enters once it is gone. (Until issue 29 every
     * wait and read lock here failed with WRONGTYPE: the extension's
     * scripts read the key as a string.)
     */
    public function testOurWaitsAndReadLocksOnTheirLockWaitForIt(): void
    {
        foreach (['write' => 'acquire', 'read' => 'acquireRead'] as $mode => $take) {
            $name = redislock_test_key("interop-foreign-$mode");
            $theirs = self::symfony()->createLock($name, 30);
            $this->assertTrue($theirs->$take());
            foreach ([
                'acquire()' => fn (\RedisLock $l) => $l->acquire(),
                'acquire(0.2)' => fn (\RedisLock $l) => $l->acquire(0.2),
                'acquireRead()' => fn (\RedisLock $l) => $l->acquireRead(),
                'acquireRead(0.2)' => fn (\RedisLock $l) => $l->acquireRead(0.2),
            ] as $how => $try) {
                $outcome = self::attempt(fn () => $try(new \RedisLock($name, 30.0, self::url(), ['reentrant' => false])));
                $this->assertSame('refused', $outcome, "their $mode lock, our $how");
                $this->assertSame([$name], redis_keys_left(self::url(), "$name*"), "their $mode lock, our $how: nothing of ours left");
                $this->assertSame('zset', redis_cmd(self::url(), 'TYPE', $name));
            }
            $this->assertTrue($theirs->isAcquired());
            $theirs->release();
        }
        foreach (['expires' => 0.4, 'is released' => null] as $how => $ttl) {
            $name = redislock_test_key('interop-foreign-blocking');
            $blocking = self::ours()->createLock($name, 30);
            $theirs = self::symfony()->createLock($name, $ttl ?? 30, false);
            $this->assertTrue($theirs->acquire());
            $pid = null;
            if ($ttl === null) {
                // Their holder releases from another process after 0.4 s.
                $pid = pcntl_fork();
                if ($pid === 0) {
                    usleep(400_000);
                    $theirs->release();
                    posix_kill(posix_getpid(), SIGKILL);
                }
            }
            $began = hrtime(true);
            $this->assertTrue($blocking->acquire(true), "their lock $how: our blocking acquire enters");
            $took = (hrtime(true) - $began) / 1e9;
            $pid !== null && pcntl_waitpid($pid, $status);
            $this->assertGreaterThan(0.3, $took, "their lock $how: we entered while it was held");
            $this->assertLessThan(3.0, $took, "their lock $how: we entered late");
            $this->assertSame('string', redis_cmd(self::url(), 'TYPE', $name));
            $blocking->release();
        }
    }

    /** Their waiter (a blocking acquire, polling every 100 ms) gets the lock after our release. */
    public function testTheirWaiterGetsTheLockAfterOurRelease(): void
    {
        $name = redislock_test_key('interop-their-wait');
        $mine = self::ours()->createLock($name, 30);
        $this->assertTrue($mine->acquire());
        $report = tempnam(sys_get_temp_dir(), 'redislock-interop-');
        $pid = pcntl_fork();
        if ($pid === 0) {
            pcntl_alarm(5);   // bounded: SIGALRM ends the child
            $theirs = self::symfony()->createLock($name, 30);
            file_put_contents($report, 'waiting');
            $theirs->acquire(true);
            file_put_contents($report, (string) hrtime(true));
            $theirs->release();
            posix_kill(posix_getpid(), SIGKILL);
        }
        $deadline = microtime(true) + 5;
        while (file_get_contents($report) !== 'waiting') {
            $this->assertLessThan($deadline, microtime(true), 'the child never waited');
            usleep(2000);
        }
        usleep(150_000);   // a poll or two find our lock
        $released = hrtime(true);
        $mine->release();
        pcntl_waitpid($pid, $status);
        $acquired = (int) file_get_contents($report);
        unlink($report);
        $this->assertGreaterThan($released, $acquired, 'the child acquired after our release');
        $this->assertLessThan(300, ($acquired - $released) / 1e6, 'at its next poll (100 ms)');
    }
}

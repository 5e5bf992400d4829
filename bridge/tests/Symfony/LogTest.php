<?php

declare(strict_types=1);

namespace RedisLock\Bridge\Tests\Symfony;

use PHPUnit\Framework\TestCase;
use RedisLock\Bridge\Symfony\RedisLockSemaphoreStore;
use RedisLock\Bridge\Symfony\RedisLockStore;
use RedisLock\Bridge\Tests\MemoryLogger;
use Symfony\Component\Lock\Exception\InvalidArgumentException as LockInvalidArgument;
use Symfony\Component\Lock\Exception\LockConflictedException;
use Symfony\Component\Lock\LockFactory;
use Symfony\Component\Semaphore\Exception\InvalidArgumentException as SemaphoreInvalidArgument;
use Symfony\Component\Semaphore\SemaphoreFactory;

/**
 * The Symfony stores log through the PSR-3 logger given to setLogger()
 * (an in-memory one here), against the run's redis-server, with user code
 * unchanged (Symfony's Lock and Semaphore): a blocking acquire that waited
 * over `log_wait_over` (notice), lost leases of write locks, read locks
 * and permits, and holds past their ttl (warning), each once; nothing
 * under the threshold, after reset(), or without a logger.
 */
final class LogTest extends TestCase
{
    private MemoryLogger $logger;

    protected function setUp(): void
    {
        $this->logger = new MemoryLogger();
    }

    private static function url(): string
    {
        return bridge_test_server()->url();
    }

    /** A lock store with a logger and a threshold of 0.2 s (and $options). */
    private function store(array $options = []): RedisLockStore
    {
        $store = new RedisLockStore(self::url(), $options + ['log_wait_over' => 0.2]);
        $store->setLogger($this->logger);

        return $store;
    }

    public function testABlockingAcquireThatWaitedIsANoticeAndTheOverrunHolderALongHold(): void
    {
        $factory = new LockFactory($this->store());
        $name = redislock_test_key('symfony-log-wait');
        $holder = $factory->createLock($name, 0.4);
        $this->assertTrue($holder->acquire());
        $waiter = $factory->createLock($name, 30);
        $this->assertTrue($waiter->acquire(true), 'woken when the holder\'s 0.4 s lease ends');
        $holder->release();
        $waiter->release();

        $this->assertCount(2, $this->logger->records, $this->logger->dump());
        [$wait] = $this->logger->event('long_wait');
        $this->assertSame('notice', $wait['level']);
        $this->assertSame($name, $wait['context']['lock']);
        $this->assertSame('lock', $wait['context']['primitive']);
        $this->assertTrue($wait['context']['acquired']);
        $this->assertNull($wait['context']['timeout'], 'a blocking acquire has no limit');
        $this->assertGreaterThan(0.3, $wait['context']['wait']);
        $this->assertLessThan(5.0, $wait['context']['wait']);
        $this->assertMatchesRegularExpression('/^redislock: waited \d\.\d+ s for the lock "' . preg_quote($name, '/') . '"$/', $wait['message']);

        [$long] = $this->logger->event('long_hold');
        $this->assertSame('warning', $long['level']);
        $this->assertSame(0.4, $long['context']['ttl'], 'the Lock\'s own ttl, set by its refresh()');
        $this->assertTrue($long['context']['lost']);
        $this->assertSame('release', $long['context']['action']);
        $this->assertStringContainsString('longer than its ttl of 0.4 s; its lease had run out before its release', $long['message']);
    }

    public function testAQuickAcquireIsNotLogged(): void
    {
        $factory = new LockFactory($this->store());
        $lock = $factory->createLock(redislock_test_key('symfony-log-quick'), 30);
        $this->assertTrue($lock->acquire(true));
        $lock->refresh();
        $lock->release();
        $this->assertTrue($lock->acquireRead(true));
        $lock->release();
        $this->assertSame([], $this->logger->records);
    }

    /**
     * A server that can evict a held lock is one `unsafe_server` warning
     * per process and server, whichever acquire found it first (a lock,
     * a blocking one, a read lock, a permit), never one per acquire.
     */
    public function testAnEvictingServerIsOneWarningPerProcess(): void
    {
        $server = \TestRedis::start(['--maxmemory', '64mb', '--maxmemory-policy', 'volatile-lfu', '--appendonly', 'yes']);
        $store = new RedisLockStore($server->url());
        $store->setLogger($this->logger);
        $lock = (new LockFactory($store))->createLock(redislock_test_key('symfony-log-unsafe'), 30);
        $this->assertTrue($lock->acquire());
        $lock->release();
        $this->assertTrue($lock->acquire(true));
        $lock->release();
        $this->assertTrue($lock->acquireRead(true));
        $lock->release();
        $semaphores = new RedisLockSemaphoreStore($server->url());
        $semaphores->setLogger($this->logger);
        $semaphore = (new SemaphoreFactory($semaphores))->createSemaphore(redislock_test_key('symfony-log-unsafe-sem'), 2);
        $this->assertTrue($semaphore->acquire());
        $semaphore->release();
        $records = $this->logger->event('unsafe_server');
        $this->assertCount(1, $records);
        $this->assertSame('warning', $records[0]['level']);
        $this->assertSame($server->url() . '/0', $records[0]['context']['server']);
        $this->assertSame('eviction', $records[0]['context']['reason']);
        $this->assertStringContainsString('maxmemory-policy volatile-lfu', $records[0]['message']);
        $this->assertCount(1, $this->logger->records, 'nothing else logged');
    }

    public function testADeletedLockIsALostLeaseOnceAtRelease(): void
    {
        $name = redislock_test_key('symfony-log-deleted');
        $lock = (new LockFactory($this->store()))->createLock($name, 30);
        $this->assertTrue($lock->acquire());
        redis_cmd(self::url(), 'DEL', $name);
        $lock->release();
        $this->assertCount(1, $this->logger->records, $this->logger->dump());
        [$lost] = $this->logger->event('lost_lease');
        $this->assertSame('warning', $lost['level']);
        $this->assertSame(['event' => 'lost_lease', 'lock' => $name, 'primitive' => 'lock', 'action' => 'release'],
            array_intersect_key($lost['context'], array_flip(['event', 'lock', 'primitive', 'action'])));
        $this->assertSame(30.0, $lost['context']['ttl']);
        $this->assertStringContainsString('was no longer ours at its release', $lost['message']);
    }

    public function testALockTakenOverIsALostLeaseAtRefreshNotAgainAtRelease(): void
    {
        $name = redislock_test_key('symfony-log-taken');
        $lock = (new LockFactory($this->store()))->createLock($name, 30);
        $this->assertTrue($lock->acquire());
        redis_cmd(self::url(), 'SET', $name, 'someone-else');
        try {
            $lock->refresh();
            $this->fail('refreshed a lock someone else holds');
        } catch (LockConflictedException) {
        }
        $lock->release();
        $this->assertCount(1, $this->logger->records, $this->logger->dump());
        $this->assertSame('refresh', $this->logger->event('lost_lease')[0]['context']['action']);
        $this->assertSame('someone-else', redis_cmd(self::url(), 'GET', $name), 'the other holder keeps it');
        redis_cmd(self::url(), 'DEL', $name);
    }

    public function testALostReadLockIsALostLeaseOfAReadHold(): void
    {
        $name = redislock_test_key('symfony-log-read');
        $lock = (new LockFactory($this->store()))->createLock($name, 30);
        $this->assertTrue($lock->acquireRead());
        redis_cmd(self::url(), 'DEL', $name, "$name~~r");
        $lock->release();
        [$lost] = $this->logger->event('lost_lease');
        $this->assertSame('read', $lost['context']['primitive']);
        $this->assertStringStartsWith('redislock: the read lock "' . $name . '" was no longer ours', $lost['message']);
    }

    public function testHoldsEndedByResetAreNoLoss(): void
    {
        $store = $this->store();
        $lock = (new LockFactory($store))->createLock(redislock_test_key('symfony-log-reset'), 30, false);
        $this->assertTrue($lock->acquire());
        $store->reset();
        $lock->release();
        $plain = (new LockFactory($this->store()))->createLock(redislock_test_key('symfony-log-reset-2'), 30, false);
        $this->assertTrue($plain->acquire());
        \RedisLock::releaseAll();  // the request scope ended by another store's reset()
        $plain->release();
        $this->assertSame([], $this->logger->records);
    }

    public function testPermitsLostOrHeldPastTheirTtlAreLogged(): void
    {
        $store = new RedisLockSemaphoreStore(self::url(), ['log_wait_over' => 0.2]);
        $store->setLogger($this->logger);
        $factory = new SemaphoreFactory($store);
        $name = redislock_test_key('symfony-log-permit');
        $semaphore = $factory->createSemaphore($name, 2, 1, 30);
        $this->assertTrue($semaphore->acquire());
        foreach (redis_cmd(self::url(), 'KEYS', "$name~~*") as $key) {
            redis_cmd(self::url(), 'DEL', $key);
        }
        $semaphore->release();
        [$lost] = $this->logger->event('lost_lease');
        $this->assertSame('permit', $lost['context']['primitive']);
        $this->assertSame($name, $lost['context']['lock']);
        $this->assertStringStartsWith('redislock: a permit of the semaphore "' . $name . '" was no longer ours at its release', $lost['message']);

        $short = $factory->createSemaphore($name . '-short', 2, 1, 0.2);
        $this->assertTrue($short->acquire());
        usleep(300_000);
        $short->release();
        [$long] = $this->logger->event('long_hold');
        $this->assertSame('permit', $long['context']['primitive']);
        $this->assertSame(0.2, $long['context']['ttl']);
        $this->assertCount(2, $this->logger->records, $this->logger->dump());

        $kept = $factory->createSemaphore($name . '-kept', 2, 1, 0.2);
        $this->assertTrue($kept->acquire());
        usleep(150_000);
        $kept->refresh(0.2);
        usleep(150_000);
        $kept->release();
        $this->assertCount(2, $this->logger->records, 'a refreshed permit is no long hold: ' . $this->logger->dump());
    }

    public function testWithoutALoggerOrWithANullThresholdNothingIsLogged(): void
    {
        $name = redislock_test_key('symfony-log-none');
        $lock = (new LockFactory(new RedisLockStore(self::url())))->createLock($name, 30);
        $this->assertTrue($lock->acquire());
        redis_cmd(self::url(), 'DEL', $name);
        $lock->release();

        $factory = new LockFactory($this->store(['log_wait_over' => null]));
        $holder = $factory->createLock($name, 0.3);
        $this->assertTrue($holder->acquire());
        $this->assertTrue($factory->createLock($name, 30)->acquire(true));
        $this->assertSame([], $this->logger->event('long_wait'));
    }

    public function testTheOptionIsCheckedByBothStores(): void
    {
        foreach ([
            fn (array $o) => new RedisLockStore(self::url(), $o),
            fn (array $o) => new RedisLockSemaphoreStore(self::url(), $o),
        ] as $build) {
            try {
                $build(['log_wait_ovr' => 1]);
                $this->fail('built with a typo');
            } catch (LockInvalidArgument|SemaphoreInvalidArgument $e) {
                $this->assertStringContainsString('unknown option "log_wait_ovr" (did you mean "log_wait_over"?)', $e->getMessage());
            }
            try {
                $build(['log_wait_over' => -0.5]);
                $this->fail('built with a negative threshold');
            } catch (LockInvalidArgument|SemaphoreInvalidArgument $e) {
                $this->assertStringContainsString('option "log_wait_over" must be a number of seconds, 0 or more', $e->getMessage());
            }
        }
    }
}

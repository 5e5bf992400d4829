<?php

namespace RedisLock\Bridge\Tests\Symfony;

use PHPUnit\Framework\TestCase;
use RedisLock\Bridge\Symfony\RedisLockSemaphoreStore;
use RedisLock\Bridge\Symfony\RedisLockStore;
use Symfony\Component\Lock\LockFactory;
use Symfony\Component\Semaphore\SemaphoreFactory;
use Symfony\Contracts\Service\ResetInterface;

/**
 * The stores' reset() (Symfony's `kernel.reset`) ends the request scope in
 * a long-running worker: locks and permits a "request" forgot (kept alive,
 * as by a leaked service) are free for the next one; holds with
 * `auto_release => false` stay.
 */
final class ResetTest extends TestCase
{
    private static function url(): string
    {
        return bridge_test_server()->url();
    }

    public function testBothStoresAreResettable(): void
    {
        $this->assertInstanceOf(ResetInterface::class, new RedisLockStore(self::url()));
        $this->assertInstanceOf(ResetInterface::class, new RedisLockSemaphoreStore(self::url()));
    }

    /**
     * symfony/lock and symfony/semaphore do not require service-contracts:
     * without it (a fresh `php` that loads only them and the bridge) both
     * stores load and still have reset().
     */
    public function testStoresLoadWithoutServiceContracts(): void
    {
        $code = "require '/usr/share/php/Symfony/Component/Lock/autoload.php';"
            . "require '/usr/share/php/Symfony/Component/Semaphore/autoload.php';"
            . 'require ' . var_export(dirname(__DIR__, 2) . '/autoload.php', true) . ';'
            . '$stores = [new RedisLock\\Bridge\\Symfony\\RedisLockStore(), new RedisLock\\Bridge\\Symfony\\RedisLockSemaphoreStore()];'
            . 'echo json_encode([interface_exists("Symfony\\Contracts\\Service\\ResetInterface"), method_exists($stores[0], "reset"), method_exists($stores[1], "reset")]);';
        $out = shell_exec(escapeshellarg(PHP_BINARY) . ' -d extension=' . escapeshellarg(redislock_extension_path())
            . ' -r ' . escapeshellarg($code) . ' 2>&1');
        $this->assertSame('[false,true,true]', $out);
    }

    /** reset() releases every hold of the process with auto_release on: the store's and a plain RedisLock's. */
    public function testLockStoreResetReleasesTheRequestsHolds(): void
    {
        $store = new RedisLockStore(self::url());
        $name = redislock_test_key('reset-lock');
        $lock = (new LockFactory($store))->createLock($name, 30);
        $this->assertTrue($lock->acquire());
        $plain = new \RedisLock(redislock_test_key('reset-plain'), 30.0, self::url());
        $this->assertTrue($plain->acquire());

        $store->reset();

        $this->assertSame(0, redis_cmd(self::url(), 'EXISTS', $name), 'the store\'s lock was released in Redis');
        $this->assertFalse($lock->isAcquired());
        $this->assertFalse($plain->isAcquired(), 'process-wide: a RedisLock used directly ends too');
        $this->assertTrue((new LockFactory($store))->createLock($name, 30)->acquire(), 'the next request takes it');
        $lock->release();   // a no-op now: the hold is no longer this Lock's
    }

    /** Read locks are the request's holds too: reset() releases them, unless auto_release is off. */
    public function testLockStoreResetReleasesReadLocks(): void
    {
        $store = new RedisLockStore(self::url());
        $name = redislock_test_key('reset-read');
        $lock = (new LockFactory($store))->createLock($name, 30);
        $this->assertTrue($lock->acquireRead());
        $kept = (new LockFactory(new RedisLockStore(self::url(), ['auto_release' => false])))
            ->createLock(redislock_test_key('reset-read-kept'), 30);
        $this->assertTrue($kept->acquireRead());

        $store->reset();

        $this->assertSame(0, redis_cmd(self::url(), 'EXISTS', $name, "$name~~r"), 'the read lock was released in Redis');
        $this->assertFalse($lock->isAcquired());
        $this->assertTrue($kept->isAcquired());
        $kept->release();
    }

    /**
     * The lock store's reset() is process-wide and covers permits too:
     * one taken through the semaphore store and one of a
     * RedisLock\Semaphore used directly are given back.
     */
    public function testLockStoreResetGivesPermitsBackToo(): void
    {
        $name = redislock_test_key('reset-lock-store-permits');
        $semaphore = (new SemaphoreFactory(new RedisLockSemaphoreStore(self::url())))->createSemaphore($name, 2, 1, 30);
        $this->assertTrue($semaphore->acquire());
        $plain = new \RedisLock\Semaphore($name, 2, 30.0, self::url());
        $this->assertTrue($plain->acquire());
        $this->assertSame(2, redis_cmd(self::url(), 'ZCOUNT', "$name~~s", '(0', '+inf'));

        (new RedisLockStore(self::url()))->reset();

        $this->assertSame(0, redis_cmd(self::url(), 'ZCOUNT', "$name~~s", '(0', '+inf'), 'both permits given back in Redis');
        $this->assertFalse($semaphore->isAcquired());
        $this->assertFalse($plain->isAcquired());
    }

    /** A store with auto_release off keeps its holds through reset() (meant to outlive the request). */
    public function testHoldsWithoutAutoReleaseSurviveReset(): void
    {
        $store = new RedisLockStore(self::url(), ['auto_release' => false]);
        $lock = (new LockFactory($store))->createLock(redislock_test_key('reset-kept'), 30);
        $this->assertTrue($lock->acquire());
        $semaphores = new RedisLockSemaphoreStore(self::url(), ['auto_release' => false]);
        $semaphore = (new SemaphoreFactory($semaphores))->createSemaphore(redislock_test_key('reset-kept-sem'), 1, 1, 30);
        $this->assertTrue($semaphore->acquire());

        $store->reset();
        $semaphores->reset();

        $this->assertTrue($lock->isAcquired());
        $this->assertTrue($semaphore->isAcquired());
        $lock->release();
        $semaphore->release();
    }

    /** The semaphore store's reset() gives back the permits it handed out. */
    public function testSemaphoreStoreResetGivesPermitsBack(): void
    {
        $store = new RedisLockSemaphoreStore(self::url());
        $name = redislock_test_key('reset-semaphore');
        $semaphore = (new SemaphoreFactory($store))->createSemaphore($name, 1, 1, 30);
        $this->assertTrue($semaphore->acquire());

        $store->reset();

        $this->assertFalse($semaphore->isAcquired());
        $this->assertSame(0, redis_cmd(self::url(), 'ZCOUNT', "$name~~s", '(0', '+inf'), 'no holder left in Redis');
        $this->assertTrue((new SemaphoreFactory($store))->createSemaphore($name, 1, 1, 30)->acquire());
    }

    /**
     * A worker loop: 20 "requests" in one process each take the same lock
     * and the same semaphore of 1 and forget them (kept alive in $leaked);
     * with reset() between requests every request gets both.
     */
    public function testAWorkerLoopWithResetBetweenRequests(): void
    {
        $locks = new RedisLockStore(self::url());
        $semaphores = new RedisLockSemaphoreStore(self::url());
        $lockName = redislock_test_key('reset-loop-lock');
        $semaphoreName = redislock_test_key('reset-loop-sem');
        $leaked = [];
        for ($request = 0; $request < 20; $request++) {
            $lock = (new LockFactory($locks))->createLock($lockName, 30);
            $semaphore = (new SemaphoreFactory($semaphores))->createSemaphore($semaphoreName, 1, 1, 30);
            $this->assertTrue($lock->acquire(), "request $request took the lock");
            $this->assertTrue($semaphore->acquire(), "request $request took the permit");
            $leaked[] = [$lock, $semaphore];
            // kernel.reset, before the next request
            $locks->reset();
            $semaphores->reset();
        }
        $this->assertSame(0, redis_cmd(self::url(), 'EXISTS', $lockName));
        $this->assertSame(0, redis_cmd(self::url(), 'ZCOUNT', "$semaphoreName~~s", '(0', '+inf'));
    }
}

<?php

namespace RedisLock\Bridge\Tests\Symfony\Bundle;

use RedisLock\Bridge\Symfony\RedisLockSemaphoreStore;
use RedisLock\Bridge\Symfony\RedisLockStore;
use Symfony\Component\Lock\LockFactory;
use Symfony\Component\Semaphore\SemaphoreFactory;

/**
 * The bundle in a real kernel (FrameworkBundle 5.4 + RedisLockBundle,
 * booted): its services and aliases, autowiring by type and by name,
 * locks and permits from its factories on the test redis-server, the
 * defaults switched off, the stores switched off, kernel.reset.
 */
final class RedisLockBundleTest extends BundleTestCase
{
    private static function url(): string
    {
        return bridge_test_server()->url();
    }

    public function testTheContainerHasTheServicesAndAliases(): void
    {
        $c = $this->boot(['servers' => self::url()]);
        $this->assertInstanceOf(RedisLockStore::class, $c->get('redislock.lock.store'));
        $this->assertInstanceOf(RedisLockSemaphoreStore::class, $c->get('redislock.semaphore.store'));
        $this->assertInstanceOf(LockFactory::class, $c->get('redislock.lock.factory'));
        $this->assertInstanceOf(SemaphoreFactory::class, $c->get('redislock.semaphore.factory'));
        $this->assertSame($c->get('redislock.lock.store'), $c->get(RedisLockStore::class));
        $this->assertSame($c->get('redislock.semaphore.store'), $c->get(RedisLockSemaphoreStore::class));
        $this->assertSame($c->get('redislock.lock.factory'), $c->get('lock.factory'), 'lock.factory is ours');
        $this->assertSame($c->get('redislock.lock.factory'), $c->get(LockFactory::class));
        $this->assertSame($c->get('redislock.semaphore.factory'), $c->get('semaphore.factory'), 'semaphore.factory is ours');
        $this->assertSame($c->get('redislock.semaphore.factory'), $c->get(SemaphoreFactory::class));

        $autowired = $c->get(Autowired::class);
        $this->assertSame($c->get('redislock.lock.factory'), $autowired->lockFactory, 'LockFactory $lockFactory');
        $this->assertSame($c->get('redislock.lock.factory'), $autowired->redislockLockFactory, 'LockFactory $redislockLockFactory');
        $this->assertSame($c->get('redislock.semaphore.factory'), $autowired->semaphoreFactory, 'SemaphoreFactory $semaphoreFactory');
        $this->assertSame($c->get('redislock.semaphore.factory'), $autowired->redislockSemaphoreFactory);
        $this->assertSame($c->get('redislock.lock.store'), $autowired->lockStore);
        $this->assertSame($c->get('redislock.semaphore.store'), $autowired->semaphoreStore);
    }

    /**
     * A lock from the application's LockFactory is the extension's (a
     * plain token in Redis under prefix + name) and excludes a lock on
     * the same name, from the same factory and from another application
     * (a second kernel) alike.
     */
    public function testALockFromTheFactoryExcludesASecondOne(): void
    {
        $config = ['servers' => self::url(), 'options' => ['prefix' => 'bundle:']];
        $factory = $this->boot($config)->get(Autowired::class)->lockFactory;
        $other = $this->boot($config)->get(Autowired::class)->lockFactory;
        $name = redislock_test_key('bundle-lock');

        $lock = $factory->createLock($name, 30);
        $this->assertTrue($lock->acquire());
        $this->assertMatchesRegularExpression('/^[0-9a-f]{32}$/', (string) redis_cmd(self::url(), 'GET', "bundle:$name"));
        $this->assertFalse($factory->createLock($name, 30)->acquire(), 'a second lock from the same factory');
        $this->assertFalse($other->createLock($name, 30)->acquire(), 'a lock of another application');
        $lock->release();
        $this->assertTrue($other->createLock($name, 30)->acquire(), 'free once released');
    }

    /** Permits from the application's SemaphoreFactory: a limit of 2 admits two. */
    public function testASemaphoreFromTheFactoryAdmitsItsLimit(): void
    {
        $factory = $this->boot(['servers' => self::url()])->get(Autowired::class)->semaphoreFactory;
        $name = redislock_test_key('bundle-semaphore');
        $first = $factory->createSemaphore($name, 2, 1, 30);
        $second = $factory->createSemaphore($name, 2, 1, 30);
        $this->assertTrue($first->acquire());
        $this->assertTrue($second->acquire());
        $this->assertFalse($factory->createSemaphore($name, 2, 1, 30)->acquire(), 'a third permit of 2');
        $this->assertSame(2, redis_cmd(self::url(), 'ZCOUNT', "$name~~s", '(0', '+inf'));
        $first->release();
        $second->release();
    }

    /** lock.initial_ttl is the lease of a Lock without a ttl of its own. */
    public function testInitialTtlIsTheStoresLease(): void
    {
        $factory = $this->boot(['servers' => self::url(), 'lock' => ['initial_ttl' => 7]])->get(LockFactory::class);
        $name = redislock_test_key('bundle-initial-ttl');
        $lock = $factory->createLock($name, null);
        $this->assertTrue($lock->acquire());
        $this->assertEqualsWithDelta(7000, (int) redis_cmd(self::url(), 'PTTL', $name), 500);
        $lock->release();
    }

    /** `default: false` leaves framework.lock's factory the application's; ours is there by name. */
    public function testDefaultFalseKeepsTheFrameworksFactory(): void
    {
        $c = $this->boot(['servers' => self::url(), 'lock' => ['default' => false], 'semaphore' => ['default' => false]]);
        $ours = $c->get('redislock.lock.factory');
        $autowired = $c->get(Autowired::class);
        $this->assertNotSame($ours, $c->get('lock.factory'));
        $this->assertNotSame($ours, $autowired->lockFactory);
        $this->assertSame($ours, $autowired->redislockLockFactory);
        $this->assertNotSame($c->get('redislock.semaphore.factory'), $autowired->semaphoreFactory);
        $this->assertSame($c->get('redislock.semaphore.factory'), $autowired->redislockSemaphoreFactory);

        $name = redislock_test_key('bundle-framework-lock');
        $lock = $autowired->lockFactory->createLock($name, 30);
        $this->assertTrue($lock->acquire());
        $this->assertSame(0, redis_cmd(self::url(), 'EXISTS', $name), 'framework.lock\'s store is not Redis');
        $lock->release();
    }

    /** `lock: false` / `semaphore: false`: no store, no factory, no alias of ours. */
    public function testTheStoresCanBeSwitchedOff(): void
    {
        $c = $this->boot(['servers' => self::url(), 'lock' => false, 'semaphore' => ['enabled' => false]]);
        foreach (['redislock.lock.store', 'redislock.lock.factory', 'redislock.semaphore.store', 'redislock.semaphore.factory', RedisLockStore::class] as $id) {
            $this->assertFalse($c->has($id), $id);
        }
        $autowired = $c->get(Autowired::class);
        $this->assertNull($autowired->lockStore);
        $this->assertNull($autowired->semaphoreStore);
        $this->assertNull($autowired->redislockSemaphoreFactory, 'no SemaphoreFactory at all (FrameworkBundle 5.4 has none)');
        $this->assertSame($c->get('lock.factory'), $autowired->redislockLockFactory, 'by name falls back to framework.lock\'s, by type');
        $name = redislock_test_key('bundle-switched-off');
        $lock = $autowired->redislockLockFactory->createLock($name, 30);
        $this->assertTrue($lock->acquire());
        $this->assertSame(0, redis_cmd(self::url(), 'EXISTS', $name), 'framework.lock\'s store is not Redis');
        $lock->release();
    }

    /**
     * The stores are tagged kernel.reset: Symfony's services_resetter
     * (between the requests of a long-running worker) ends the request's
     * locks and permits.
     */
    public function testKernelResetEndsTheRequestsHolds(): void
    {
        $c = $this->boot(['servers' => self::url()]);
        $autowired = $c->get(Autowired::class);
        $lockName = redislock_test_key('bundle-reset-lock');
        $semaphoreName = redislock_test_key('bundle-reset-semaphore');
        $lock = $autowired->lockFactory->createLock($lockName, 30);
        $semaphore = $autowired->semaphoreFactory->createSemaphore($semaphoreName, 1, 1, 30);
        $this->assertTrue($lock->acquire());
        $this->assertTrue($semaphore->acquire());

        $c->get('services_resetter')->reset();

        $this->assertSame(0, redis_cmd(self::url(), 'EXISTS', $lockName), 'the lock was released in Redis');
        $this->assertSame(0, redis_cmd(self::url(), 'ZCOUNT', "$semaphoreName~~s", '(0', '+inf'), 'the permit was given back');
        $this->assertFalse($lock->isAcquired());
        $this->assertFalse($semaphore->isAcquired());
    }
}

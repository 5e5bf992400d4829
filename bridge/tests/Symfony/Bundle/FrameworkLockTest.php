<?php

namespace RedisLock\Bridge\Tests\Symfony\Bundle;

use RedisLock\Bridge\Symfony\RedisLockStore;
use Symfony\Component\DependencyInjection\ContainerBuilder;
use Symfony\Component\DependencyInjection\Reference;
use Symfony\Component\Lock\Exception\InvalidArgumentException;
use Symfony\Component\Lock\LockFactory;

/**
 * Why the bundle sets `lock.factory` itself: `framework.lock` cannot name
 * a store service (its resources are DSNs for Symfony's StoreFactory),
 * and what the docs show for an application without the bundle: two
 * services make the store the application's LockFactory.
 */
final class FrameworkLockTest extends BundleTestCase
{
    private static function url(): string
    {
        return bridge_test_server()->url();
    }

    /** `framework.lock: redislock.lock.store` is a DSN to StoreFactory, which knows no such thing. */
    public function testFrameworkLockCannotNameAStoreService(): void
    {
        $c = $this->boot(['servers' => self::url(), 'lock' => ['default' => false]], ['lock' => 'redislock.lock.store']);
        $this->expectException(InvalidArgumentException::class);
        // Symfony 5.4 names the string it could not use; 6.4 says only that.
        $this->expectExceptionMessageMatches('/Unsupported Connection: "redislock\\.lock\\.store"|No lock store supports the given DSN/');
        $c->get('lock.factory');
    }

    /** Without the bundle: the store and a `lock.factory` on it (config/services.yaml in docs/frameworks.md). */
    public function testTwoServicesMakeTheStoreTheApplicationsLockFactory(): void
    {
        $url = self::url();
        $c = $this->boot([], [], static function (ContainerBuilder $container) use ($url): void {
            $container->register(RedisLockStore::class, RedisLockStore::class)->setArguments([$url]);
            $container->register('lock.factory', LockFactory::class)->setArguments([new Reference(RedisLockStore::class)]);
        });
        $factory = $c->get(Autowired::class)->lockFactory;
        $this->assertSame($c->get('lock.factory'), $factory, 'LockFactory autowires to it');
        $name = redislock_test_key('services-yaml');
        $lock = $factory->createLock($name, 30);
        $this->assertTrue($lock->acquire());
        $this->assertSame(1, redis_cmd($url, 'EXISTS', $name), 'a redislock lock in Redis');
        $this->assertFalse($factory->createLock($name, 30)->acquire());
        $lock->release();
    }
}

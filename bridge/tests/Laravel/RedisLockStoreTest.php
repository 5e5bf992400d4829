<?php

namespace RedisLock\Bridge\Tests\Laravel;

use Illuminate\Contracts\Cache\LockProvider;
use Illuminate\Contracts\Cache\Store;
use Illuminate\Support\Facades\Cache;
use RedisLock\Bridge\Laravel\RedisLockStore;

/**
 * The `redislock` cache driver: registration through the service provider,
 * the key prefix, and cache entries, which go to the store named by
 * `store` (a LogicException without one).
 */
class RedisLockStoreTest extends LaravelTestCase
{
    /** The provider registers the driver; its stores are lock providers. */
    public function testDriverIsRegistered(): void
    {
        $store = Cache::store('locks')->getStore();
        $this->assertInstanceOf(RedisLockStore::class, $store);
        $this->assertInstanceOf(Store::class, $store);
        $this->assertInstanceOf(LockProvider::class, $store);
        $this->assertSame($store, Cache::getStore(), 'the default store');
    }

    /** Registering the provider after the cache manager was resolved works too. */
    public function testProviderRegisteredAfterTheCacheManagerWasResolved(): void
    {
        $app = new \Illuminate\Container\Container();
        $app->instance('config', $this->app['config']);
        $app->instance('cache', new \Illuminate\Cache\CacheManager($app));
        (new \RedisLock\Bridge\Laravel\RedisLockServiceProvider($app))->register();

        $this->assertInstanceOf(RedisLockStore::class, $app['cache']->store('locks')->getStore());
    }

    /** Without a `prefix` key the store uses cache.prefix, literally. */
    public function testPrefixDefaultsToTheCachePrefix(): void
    {
        $this->app['config']->set('cache.stores.no_prefix', ['driver' => 'redislock', 'servers' => $this->url()]);
        $this->app['config']->set('cache.prefix', $this->prefix . 'app-');

        $store = Cache::store('no_prefix');
        $this->assertSame($this->prefix . 'app-', $store->getPrefix());
        $lock = $store->lock('foo', 10);
        $this->assertTrue($lock->get());
        $this->assertSame($lock->owner(), $this->redis('GET', $this->prefix . 'app-foo'));
        $lock->release();
    }

    /** RedisLock options reach the extension: one it refuses fails at first use. */
    public function testOptionsReachTheExtension(): void
    {
        $this->app['config']->set('cache.stores.bad_options', [
            'driver' => 'redislock', 'servers' => $this->url(), 'options' => ['tls_cert' => '/only/the/cert.pem'],
        ]);
        $store = Cache::store('bad_options');
        $this->expectException(\ValueError::class);
        $this->expectExceptionMessage('tls_cert and tls_key');
        $store->lock('foo', 10)->get();
    }

    /** Cache entries without `store`: a LogicException that says to set it; locks still work. */
    public function testEntriesWithoutStoreThrow(): void
    {
        $calls = [
            'get' => fn () => Cache::get('k'),
            'put' => fn () => Cache::put('k', 'v', 10),
            'many' => fn () => Cache::many(['a', 'b']),
            'putMany' => fn () => Cache::putMany(['a' => 1], 10),
            'increment' => fn () => Cache::increment('n'),
            'decrement' => fn () => Cache::decrement('n'),
            'forever' => fn () => Cache::forever('k', 'v'),
            'forget' => fn () => Cache::forget('k'),
            'flush' => fn () => Cache::flush(),
        ];
        foreach ($calls as $name => $call) {
            try {
                $call();
                $this->fail("$name did not throw");
            } catch (\LogicException $e) {
                $this->assertStringContainsString('"store"', $e->getMessage(), $name);
            }
        }

        $lock = Cache::lock('foo', 10);
        $this->assertTrue($lock->get());
        $lock->release();
    }

    /** With `'store' => 'array'` the entries live in the array store; locks in Redis. */
    public function testEntriesGoToTheNamedStore(): void
    {
        $cache = Cache::store('locks_with_entries');

        $this->assertTrue($cache->put('k', 'v', 10));
        $this->assertSame('v', $cache->get('k'));
        $this->assertSame('v', Cache::store('array')->get('k'), 'kept by the array store');
        $this->assertSame(['k' => 'v', 'x' => null], $cache->many(['k', 'x']));
        $this->assertTrue($cache->putMany(['a' => 1, 'b' => 2], 10));
        $this->assertSame(3, $cache->increment('a', 2));
        $this->assertSame(1, $cache->decrement('b'));
        $this->assertTrue($cache->forever('f', 'ever'));
        $this->assertSame('ever', $cache->get('f'));
        $this->assertSame('computed', $cache->remember('r', 10, fn () => 'computed'));
        $this->assertTrue($cache->forget('k'));
        $this->assertNull($cache->get('k'));
        $this->assertTrue($cache->flush());
        $this->assertNull($cache->get('f'));
        $this->assertSame(0, (int) $this->redis('EXISTS', $this->prefix . 'k'), 'no entry in Redis');

        $lock = $cache->lock('foo', 10);
        $this->assertTrue($lock->get());
        $this->assertTrue(Cache::lock('foo')->isLocked(), 'the same Redis lock');
        $lock->release();
    }

    /** A `store` that names a redislock store is refused (it would delegate to itself). */
    public function testStoreNamingARedisLockStoreIsRefused(): void
    {
        $this->app['config']->set('cache.stores.loop', [
            'driver' => 'redislock', 'servers' => $this->url(), 'store' => 'loop',
        ]);
        $this->expectException(\LogicException::class);
        $this->expectExceptionMessage('another driver');
        Cache::store('loop')->get('k');
    }

    /** A bad config value fails when the store is built, naming the key. */
    public function testBadConfigIsRefused(): void
    {
        $this->app['config']->set('cache.stores.bad', ['driver' => 'redislock', 'options' => 'retry_delay=1']);
        $this->expectException(\InvalidArgumentException::class);
        $this->expectExceptionMessage('"options"');
        Cache::store('bad');
    }
}

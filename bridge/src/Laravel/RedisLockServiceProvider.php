<?php

namespace RedisLock\Bridge\Laravel;

use Illuminate\Cache\CacheManager;
use Illuminate\Support\ServiceProvider;

/**
 * Registers the cache driver `redislock` with Laravel's cache manager.
 *
 * A store of that driver (config/cache.php):
 *
 *     'locks' => [
 *         'driver' => 'redislock',
 *         'servers' => 'redis://127.0.0.1:6379',   // a URL or a list; null: ini redislock.servers
 *         'options' => ['retry_delay' => 0.5],     // RedisLock options (see the README)
 *         'prefix' => 'app:lock:',                 // null: cache.prefix
 *         'store' => 'redis',                      // where get/put/... of this store go
 *     ],
 *
 * answers `Cache::store('locks')->lock($name, $seconds, $owner)` and
 * `restoreLock($name, $owner)` with a {@see RedisLockLock}, and
 * `Cache::lock()` when it is the default store.
 *
 * The driver is added when the cache manager is resolved (or at once when it
 * already was), so it works whatever order the providers boot in, and with a
 * bare Illuminate container as well as a full application.
 */
class RedisLockServiceProvider extends ServiceProvider
{
    /** The driver name used in a store's `driver` key. */
    public const DRIVER = 'redislock';

    /**
     * Adds the `redislock` driver to the cache manager, now or when it is
     * first resolved.
     *
     * @return void
     */
    public function register()
    {
        $this->app->afterResolving('cache', function ($manager): void {
            if ($manager instanceof CacheManager) {
                self::extend($manager);
            }
        });

        if ($this->app->resolved('cache')) {
            $manager = $this->app->make('cache');
            if ($manager instanceof CacheManager) {
                self::extend($manager);
            }
        }
    }

    /**
     * Nothing to do at boot: the driver is registered in register().
     *
     * @return void
     */
    public function boot()
    {
    }

    /**
     * Registers the `redislock` driver on a cache manager (idempotent).
     *
     * Usable without the provider, e.g. in a custom application setup.
     */
    public static function extend(CacheManager $manager): void
    {
        // Not a static closure: CacheManager::extend() binds it to the
        // manager, which also makes `self` the manager's class inside it.
        $manager->extend(self::DRIVER, function ($app, #[\SensitiveParameter] array $config) use ($manager) {
            $store = new RedisLockStore($manager, $config, RedisLockServiceProvider::defaultPrefix($app));

            // Laravel 11+ takes the store's config as a second argument
            // (for its `events` flag); Laravel 8-10 ignore it.
            return $manager->repository($store, $config);
        });
    }

    /**
     * The application's `cache.prefix`, used when a store sets no `prefix`
     * (as Laravel's own drivers do).
     *
     * @param  mixed  $app  the container the cache manager was built with
     */
    public static function defaultPrefix($app): string
    {
        try {
            $prefix = $app['config']['cache.prefix'] ?? '';
        } catch (\Throwable) {
            $prefix = '';
        }

        return is_string($prefix) ? $prefix : '';
    }
}

<?php

namespace RedisLock\Bridge\Laravel;

use Illuminate\Contracts\Container\Container;
use RedisLock\Bridge\Console\Target;

/**
 * The locks of a Laravel application's `redislock` cache store, for
 * `php artisan redislock:*`: the default cache store when its driver is
 * `redislock`, else the first store configured with that driver; the
 * same servers, options and key prefix as `Cache::store(...)->lock()`
 * (with `'connection'`, the key of Laravel's own redis store).
 */
final class ConsoleTarget implements Target
{
    private Container $app;

    public function __construct(Container $app)
    {
        $this->app = $app;
    }

    public function inspect(string $name): array
    {
        return $this->store()->inspect($name);
    }

    public function diagnose(string $name): array
    {
        return $this->store()->diagnose($name);
    }

    public function forceRelease(string $name): bool
    {
        return $this->store()->lock($name)->forceRelease();
    }

    /** The application's redislock store (resolved at each command, as the app configures it). */
    private function store(): RedisLockStore
    {
        $config = $this->app->make('config');
        $stores = (array) $config->get('cache.stores', []);
        $default = $config->get('cache.default');
        $names = array_keys(array_filter($stores, static fn ($s) => is_array($s) && ($s['driver'] ?? null) === 'redislock'));
        if ($names === []) {
            throw new \ValueError('no cache store has the driver "redislock" (config/cache.php); or pass --servers');
        }
        $name = in_array($default, $names, true) ? $default : $names[0];
        $store = $this->app->make('cache')->store($name)->getStore();
        if (!$store instanceof RedisLockStore) {
            throw new \ValueError(sprintf('the cache store "%s" is not a redislock store', $name));
        }
        return $store;
    }
}

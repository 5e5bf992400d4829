<?php

declare(strict_types=1);

require_once __DIR__ . '/../LaravelLockContender.php';
require_once __DIR__ . '/../../../bridge/autoload.php';

use Illuminate\Cache\CacheManager;
use Illuminate\Config\Repository as Config;
use Illuminate\Container\Container;
use Illuminate\Contracts\Cache\Lock;
use Illuminate\Support\Facades\Cache;
use Illuminate\Support\Facades\Facade;
use RedisLock\Bridge\Laravel\RedisLockServiceProvider;

/**
 * Laravel's cache lock through the bridge's `redislock` cache driver: a
 * bare container with the config (a `locks` store, driver redislock, no
 * key prefix), the CacheManager as `cache`, RedisLockServiceProvider and
 * the Cache facade, and one `Cache::store('locks')->lock($key, 10)` per
 * hold, as application code writes it (facade + manager + repository on
 * every hold; the `laravel` contender calls its RedisStore directly).
 * get() tries once; block($seconds) waits in the extension, woken by the
 * holder's release. release() is the extension's compare-and-delete.
 */
final class LaravelRedislockContender extends LaravelLockContender
{

    public function __construct(private readonly Endpoint $endpoint)
    {
    }

    public function prepare(): void
    {
        if (!extension_loaded('redislock')) {
            throw new RuntimeException('the redislock extension is not loaded (php -d extension=.../redislock.so)');
        }
        $app = new Container();
        Container::setInstance($app);
        $app->instance('config', new Config(['cache' => [
            'default' => 'locks',
            'prefix' => '',
            'stores' => ['locks' => ['driver' => 'redislock', 'servers' => $this->endpoint->url(), 'prefix' => '']],
        ]]));
        $app->singleton('cache', fn ($app) => new CacheManager($app));
        (new RedisLockServiceProvider($app))->register();
        Facade::setFacadeApplication($app);
        // Resolves the store, opens the extension's pooled connection and loads its scripts.
        $lock = Cache::store('locks')->lock('bench:prepare:' . getmypid(), LOCK_TTL);
        $lock->get();
        $lock->release();
    }

    protected function newLock(string $key): Lock
    {
        return Cache::store('locks')->lock($key, LOCK_TTL);
    }
}

return fn (Endpoint $redis) => new LaravelRedislockContender($redis);

<?php

declare(strict_types=1);

require_once __DIR__ . '/../LaravelPrimitives.php';
require_once __DIR__ . '/../../../bridge/autoload.php';

use Illuminate\Cache\CacheManager;
use Illuminate\Config\Repository as Config;
use Illuminate\Support\Facades\Cache;
use RedisLock\Bridge\Laravel\RedisLockServiceProvider;

/**
 * The bridge's funnel: `Cache::store('locks')->funnel($name)->limit(4)->block(10)->then(...)`
 * (a bare container with the config of a `locks` store of the bridge's
 * `redislock` driver, the CacheManager as `cache`, RedisLockServiceProvider
 * and the Cache facade, as in the main suite's laravel-redislock). The
 * builder is the bridge's ConcurrencyLimiterBuilder on RedisLock\Semaphore:
 * a waiter is woken when a slot is given back, in arrival order.
 */
final class LaravelRedislockPrimitives extends LaravelPrimitives
{
    public function __construct(private readonly string $url)
    {
    }

    public function prepare(string $workload): void
    {
        $app = self::container();
        $app->instance('config', new Config(['cache' => [
            'default' => 'locks',
            'prefix' => '',
            'stores' => ['locks' => ['driver' => 'redislock', 'servers' => $this->url, 'prefix' => '']],
        ]]));
        $app->singleton('cache', fn ($app) => new CacheManager($app));
        (new RedisLockServiceProvider($app))->register();
        parent::prepare($workload);
    }

    protected function funnel(string $name): object
    {
        return Cache::store('locks')->funnel($name);
    }
}

return [
    'make' => fn (Endpoint $redis) => new LaravelRedislockPrimitives($redis->url()),
    'skip' => fn (string $workload): ?string => extension_loaded('redislock') ? null : 'the redislock extension is not loaded',
];

<?php

/*
 * One queue worker running one GenerateReport job, on the smallest Laravel
 * that has a cache (what `php artisan queue:work` does once the job is
 * popped from the queue):
 *     php -d extension=redislock.so examples/laravel/worker.php 2024-06-01
 * The Redis URL comes from REDISLOCK_URL (default redis://127.0.0.1:6379).
 *
 * In a full Laravel app, none of this file is needed: add the provider
 * (RedisLock\Bridge\Laravel\RedisLockServiceProvider; package discovery
 * does it with composer) and a store to config/cache.php:
 *     'locks' => ['driver' => 'redislock', 'servers' => env('REDIS_URL'), 'store' => 'redis'],
 * then use Cache::store('locks')->lock(...), or make it the default store.
 */

// Debian's packages (php-laravel-framework) instead of composer's vendor/autoload.php.
require '/usr/share/php/Illuminate/Support/autoload.php';
require '/usr/share/php/Illuminate/Container/autoload.php';
require '/usr/share/php/Illuminate/Config/autoload.php';
require '/usr/share/php/Illuminate/Cache/autoload.php';
require '/usr/share/php/Illuminate/Bus/autoload.php';
require '/usr/share/php/Illuminate/Queue/autoload.php';
require dirname(__DIR__, 2) . '/bridge/autoload.php';
require __DIR__ . '/GenerateReport.php';

use App\Jobs\GenerateReport;
use Illuminate\Cache\CacheManager;
use Illuminate\Config\Repository as Config;
use Illuminate\Container\Container;
use Illuminate\Support\Facades\Facade;
use RedisLock\Bridge\Laravel\RedisLockServiceProvider;

$app = new Container();
Container::setInstance($app);

// config/cache.php: the default store `locks` uses the redislock driver.
$app->instance('config', new Config(['cache' => [
    'default' => 'locks',
    'stores' => [
        'locks' => [
            'driver' => 'redislock',
            'servers' => getenv('REDISLOCK_URL') ?: 'redis://127.0.0.1:6379',
            'prefix' => 'app:lock:',
        ],
    ],
]]));
$app->singleton('cache', fn ($app) => new CacheManager($app));
(new RedisLockServiceProvider($app))->register();   // adds the `redislock` driver
Facade::setFacadeApplication($app);                  // Cache::... resolves `cache` here

// The worker runs the job's handle() through the container (dependencies injected).
$app->call([new GenerateReport($argv[1] ?? date('Y-m-d')), 'handle']);

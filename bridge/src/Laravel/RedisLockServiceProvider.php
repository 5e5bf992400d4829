<?php

namespace RedisLock\Bridge\Laravel;

use RedisLock\Bridge\Console\RedisLockCommand;

use Illuminate\Cache\CacheManager;
use Illuminate\Support\ServiceProvider;

/**
 * Registers the cache driver `redislock` with Laravel's cache manager.
 *
 * A store of that driver (config/cache.php), on a Redis connection of
 * config/database.php, locking the keys of Laravel's own redis store:
 *
 *     'locks' => [
 *         'driver' => 'redislock',
 *         'connection' => 'default',               // database.redis.default: server, password, db, prefix
 *         'options' => ['retry_delay' => 0.5],     // RedisLock options (see the README)
 *         'store' => 'redis',                      // where get/put/... of this store go
 *     ],
 *
 * or on servers of its own: `'servers' => 'redis://127.0.0.1:6379'` (a URL
 * or a list; null: ini redislock.servers) and `'prefix' => 'app:lock:'`
 * (null: cache.prefix) instead of `connection`. See {@see RedisLockStore}.
 *
 * answers `Cache::store('locks')->lock($name, $seconds, $owner)` and
 * `restoreLock($name, $owner)` with a {@see RedisLockLock}, and
 * `Cache::lock()` when it is the default store.
 *
 * The driver is added when the cache manager is resolved (or at once when it
 * already was), so it works whatever order the providers boot in, and with a
 * bare Illuminate container as well as a full application.
 *
 * Under Laravel Octane (Swoole, RoadRunner, FrankenPHP), where one PHP
 * request serves many HTTP requests, the provider ends the extension's
 * request scope at Octane's `RequestTerminated`, `TaskTerminated` and
 * `TickTerminated` events, as the end of a PHP-FPM request does: see
 * {@see endRequestScope()}. Without Octane nothing is registered.
 *
 * Logs: each store logs through the application's `log` (the default
 * channel; see {@see RedisLockStore::setLogger()}) lost leases, waits
 * longer than its `options.log_wait_over` (1 s by default) and holds
 * longer than their ttl ({@see \RedisLock\Bridge\LockLog}).
 *
 * Metrics: with `redislock.metrics.route` set in the configuration
 * (config/redislock.php), e.g.
 *
 *     return ['metrics' => ['route' => '/redislock/metrics', 'middleware' => ['auth.basic']]];
 *
 * a GET route of that path (named `redislock.metrics`) answers
 * `RedisLock::metrics()`, the PHP-FPM pool's figures in Prometheus's
 * text format ({@see MetricsController}). Off by default: the route is
 * registered only when the path is set, behind the middleware listed.
 */
class RedisLockServiceProvider extends ServiceProvider
{
    /** The driver name used in a store's `driver` key. */
    public const DRIVER = 'redislock';

    /** The config key of the metrics route's path (null or absent: no route). */
    public const METRICS_ROUTE = 'redislock.metrics.route';

    /** The config key of the metrics route's middleware (a list; default none). */
    public const METRICS_MIDDLEWARE = 'redislock.metrics.middleware';

    /** Octane's events after a request, a task and a tick (listened to when the classes exist). */
    public const OCTANE_TERMINATION_EVENTS = [
        'Laravel\\Octane\\Events\\RequestTerminated',
        'Laravel\\Octane\\Events\\TaskTerminated',
        'Laravel\\Octane\\Events\\TickTerminated',
    ];

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
     * Listens to Octane's termination events when Octane is installed (the
     * driver itself is registered in register()).
     *
     * @return void
     */
    public function boot()
    {
        // php artisan redislock:inspect|release|watch NAME, redislock:metrics (the command line's
        // commands), added when Artisan starts.
        if ((!method_exists($this->app, 'runningInConsole') || $this->app->runningInConsole())
            && class_exists(\Illuminate\Console\Application::class)) {
            $app = $this->app;
            \Illuminate\Console\Application::starting(static function ($artisan) use ($app): void {
                foreach (array_keys(RedisLockCommand::VERBS) as $verb) {
                    $artisan->add(new RedisLockCommand($verb, new ConsoleTarget($app)));
                }
            });
        }
        $this->registerMetricsRoute();
        $events = array_values(array_filter(self::OCTANE_TERMINATION_EVENTS, 'class_exists'));
        if ($events === [] || !$this->app->bound('events')) {
            return;
        }
        $this->app->make('events')->listen($events, static function (): void {
            RedisLockServiceProvider::endRequestScope();
        });
    }

    /**
     * The metrics route, when `redislock.metrics.route` is set: GET of that
     * path, named `redislock.metrics`, behind `redislock.metrics.middleware`.
     * Not when the application's routes are cached (`php artisan
     * route:cache` kept it, as it keeps every route: the controller is a
     * class, not a closure) or there is no router.
     *
     * @throws \InvalidArgumentException when the path or the middleware list is malformed
     */
    private function registerMetricsRoute(): void
    {
        $path = self::config($this->app, self::METRICS_ROUTE);
        if ($path === null || $path === false || $path === '') {
            return;
        }
        if (!is_string($path)) {
            throw new \InvalidArgumentException(sprintf('%s must be a path such as \'/redislock/metrics\', or null (no route)', self::METRICS_ROUTE));
        }
        $middleware = self::config($this->app, self::METRICS_MIDDLEWARE) ?? [];
        if (is_string($middleware)) {
            $middleware = [$middleware];
        }
        if (!is_array($middleware) || array_filter($middleware, static fn ($m) => !is_string($m)) !== []) {
            throw new \InvalidArgumentException(sprintf('%s must be a list of middleware names or classes', self::METRICS_MIDDLEWARE));
        }
        if ((method_exists($this->app, 'routesAreCached') && $this->app->routesAreCached()) || !$this->app->bound('router')) {
            return;
        }
        $this->app->make('router')->get($path, MetricsController::class)
            ->middleware(array_values($middleware))
            ->name('redislock.metrics');
    }

    /**
     * Ends the request scope, as the end of a PHP-FPM request does:
     * `RedisLock::releaseAll()`. Called at Octane's termination events;
     * call it yourself in another worker loop (a queue worker between
     * jobs, a plain RoadRunner worker).
     *
     * It is process-wide. Holds with the extension's `auto_release` on
     * (\RedisLock objects used directly) are released in Redis. The
     * Laravel locks of the `redislock` store have `auto_release` off
     * (Laravel's locks outlive the request until released), so they stay
     * held; but a `$seconds = 0` lock whose object is gone stops being
     * renewed and frees within its 15 s lease, exactly as after a PHP-FPM
     * request. Permits of a `RedisLock\Semaphore` (the funnel's) with
     * `auto_release` on are given back too.
     *
     * @return int how many locks and permits were released in Redis
     */
    public static function endRequestScope(): int
    {
        return \RedisLock::releaseAll();
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
            $store = new RedisLockStore(
                $manager,
                RedisLockServiceProvider::withoutAddedStore($app, $config),
                RedisLockServiceProvider::defaultPrefix($app),
                RedisLockServiceProvider::redisConfig($app),
                RedisLockServiceProvider::logger($app),
            );

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
        $prefix = self::config($app, 'cache.prefix');

        return is_string($prefix) ? $prefix : '';
    }

    /**
     * The application's logger (`log`: Laravel's LogManager, its default
     * channel), or null when there is none.
     *
     * @param  mixed  $app  the container the cache manager was built with
     */
    public static function logger($app): ?\Psr\Log\LoggerInterface
    {
        try {
            $log = is_object($app) && method_exists($app, 'bound') && $app->bound('log') ? $app->make('log') : null;
        } catch (\Throwable) {
            return null;
        }

        return $log instanceof \Psr\Log\LoggerInterface ? $log : null;
    }

    /**
     * The application's `database.redis` (the connections a store's
     * `connection` names), or null.
     *
     * @param  mixed  $app  the container the cache manager was built with
     * @return array<string, mixed>|null
     */
    public static function redisConfig($app): ?array
    {
        $redis = self::config($app, 'database.redis');

        return is_array($redis) ? $redis : null;
    }

    /**
     * The store's config without the `store` key that Laravel 11+ adds
     * itself (`Arr::add($config, 'store', $name)`, the store's own name),
     * which would make the store keep its cache entries in itself: dropped
     * when it names a redislock store whose configuration has no `store`.
     * Without a `store`, cache entries throw the LogicException that says
     * to set one.
     *
     * @param  mixed  $app  the container the cache manager was built with
     * @param  array<string, mixed>  $config
     * @return array<string, mixed>
     */
    public static function withoutAddedStore($app, #[\SensitiveParameter] array $config): array
    {
        $name = $config['store'] ?? null;
        if (!is_string($name) || $name === '') {
            return $config;
        }
        $named = self::config($app, 'cache.stores.' . $name);
        $added = is_array($named)
            ? ($named['driver'] ?? null) === self::DRIVER && !array_key_exists('store', $named)
            : $name === ($config['name'] ?? 'ondemand');  // Laravel 11+'s Cache::build()
        if ($added) {
            unset($config['store']);
        }

        return $config;
    }

    /**
     * A value of the application's config, or null.
     *
     * @param  mixed  $app
     */
    private static function config($app, string $key): mixed
    {
        try {
            return $app['config'][$key] ?? null;
        } catch (\Throwable) {
            return null;
        }
    }
}

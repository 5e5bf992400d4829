<?php

namespace RedisLock\Bridge\Tests\Laravel;

use Illuminate\Cache\CacheManager;
use Illuminate\Config\Repository as Config;
use Illuminate\Container\Container;
use Illuminate\Redis\RedisManager;
use Illuminate\Support\Facades\Facade;
use PHPUnit\Framework\TestCase;
use RedisLock\Bridge\Laravel\RedisLockServiceProvider;

require_once '/usr/share/php/Illuminate/Redis/autoload.php';

/**
 * A Laravel application as Laravel 8's skeleton configures it
 * (config/database.php and config/cache.php, APP_NAME "laravel"), on a
 * private redis-server that needs a password (started once per class by
 * the fixture, FLUSHALL before every test):
 *
 * - `database.redis`: client phpredis, options.prefix `laravel_database_`,
 *   connections `default` (database 2, REDIS_DB) and `cache` (database 3),
 *   both with the password;
 * - `cache.prefix` `laravel_cache`; stores `redis` (Laravel's own:
 *   connection `cache`, lock_connection `default`) and `locks` (redislock,
 *   `'connection' => 'default'`, cache entries in `redis`);
 * - `redis` is Laravel's RedisManager, `cache` its CacheManager, and
 *   RedisLockServiceProvider is registered.
 */
abstract class LaravelRedisTestCase extends TestCase
{
    /** The server's password (never to be shown by a bridge object). */
    protected const PASSWORD = 's3cr3t-p4ss';

    /** The database of the `default` connection (REDIS_DB). */
    protected const DB = 2;

    protected static ?\TestRedis $server = null;

    protected Container $app;

    /** @var array<int, \Redis> plain clients by database */
    private array $raw = [];

    /** Starts the password-protected server of this class. */
    public static function setUpBeforeClass(): void
    {
        parent::setUpBeforeClass();
        self::$server = \TestRedis::start(['--requirepass', self::PASSWORD, '--appendonly', 'yes']);
    }

    /** Stops it (by pid, through the fixture). */
    public static function tearDownAfterClass(): void
    {
        self::$server = null;
        parent::tearDownAfterClass();
    }

    /** Empties the server; builds the application. */
    protected function setUp(): void
    {
        parent::setUp();
        $this->raw(0)->flushAll();

        $this->app = new Container();
        Container::setInstance($this->app);
        $this->app->instance('config', new Config([
            'database' => ['redis' => $this->redisConfig()],
            'cache' => [
                'default' => 'redis',
                'prefix' => 'laravel_cache',
                'stores' => [
                    'redis' => ['driver' => 'redis', 'connection' => 'cache', 'lock_connection' => 'default'],
                    'locks' => ['driver' => 'redislock', 'connection' => 'default', 'store' => 'redis'],
                ],
            ],
        ]));
        $this->app->singleton('redis', fn ($app) => new RedisManager($app, 'phpredis', $app['config']['database.redis']));
        $this->app->singleton('cache', fn ($app) => new CacheManager($app));
        (new RedisLockServiceProvider($this->app))->register();

        Facade::clearResolvedInstances();
        Facade::setFacadeApplication($this->app);
    }

    /** Closes Laravel's connections and forgets the application. */
    protected function tearDown(): void
    {
        if ($this->app->resolved('redis')) {
            foreach ($this->app['redis']->connections() ?? [] as $connection) {
                $connection->disconnect();
            }
        }
        foreach ($this->raw as $redis) {
            $redis->close();
        }
        $this->raw = [];
        Facade::clearResolvedInstances();
        Facade::setFacadeApplication(null);
        Container::setInstance(null);

        parent::tearDown();
    }

    /**
     * `database.redis` of Laravel 8's config/database.php, with REDIS_PORT,
     * REDIS_PASSWORD and REDIS_DB set.
     *
     * @return array<string, mixed>
     */
    protected function redisConfig(): array
    {
        $connection = fn (int $db) => [
            'url' => null,
            'host' => '127.0.0.1',
            'password' => self::PASSWORD,
            'port' => (string) self::$server->port,
            'database' => (string) $db,
        ];

        return [
            'client' => 'phpredis',
            'options' => ['cluster' => 'redis', 'prefix' => 'laravel_database_'],
            'default' => $connection(self::DB),
            'cache' => $connection(self::DB + 1),
        ];
    }

    /** The server's URL with the password. */
    protected function url(): string
    {
        return self::$server->url(':' . self::PASSWORD . '@');
    }

    /** A plain phpredis client on database $db (no prefix: it sees keys as they are). */
    protected function raw(int $db): \Redis
    {
        if (!isset($this->raw[$db])) {
            $redis = new \Redis();
            $redis->connect('127.0.0.1', self::$server->port, 2.0);
            $redis->auth(self::PASSWORD);
            $redis->select($db);
            $this->raw[$db] = $redis;
        }

        return $this->raw[$db];
    }
}

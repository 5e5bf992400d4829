<?php

namespace RedisLock\Bridge\Tests\Laravel;

use Illuminate\Cache\CacheManager;
use Illuminate\Config\Repository as Config;
use Illuminate\Container\Container;
use Illuminate\Support\Facades\Facade;
use PHPUnit\Framework\TestCase;
use RedisLock\Bridge\Laravel\RedisLockServiceProvider;

/**
 * Boots the smallest Laravel that has a cache: an Illuminate container with
 * a config repository (cache.default, cache.stores, cache.prefix), the cache
 * manager as `cache`, the Cache facade, and RedisLockServiceProvider
 * (register + boot). Every test gets its own key prefix, so its lock names
 * are unique in the run's redis-server.
 *
 * Stores:
 * - `locks` (the default): redislock, no `store` for entries;
 * - `locks_with_entries`: redislock, entries in the `array` store;
 * - `locks_short_renew`: redislock with `auto_renew_ttl` 0.6 s (renewal tests);
 * - `locks_slow_fallback`: redislock with `retry_delay` 5 s (wake-up tests);
 * - `array`: Laravel's array store.
 */
abstract class LaravelTestCase extends TestCase
{
    /** Lease of locks with $seconds = 0 in the `locks_short_renew` store. */
    protected const SHORT_RENEW_TTL = 0.6;

    protected Container $app;

    /** The key prefix of this test's locks. */
    protected string $prefix;

    /** Builds the container, the config and the cache manager; registers and boots the provider. */
    protected function setUp(): void
    {
        parent::setUp();

        $url = bridge_test_server()->url();
        $this->prefix = 'bridge:laravel:' . bin2hex(random_bytes(4)) . ':';

        $this->app = new Container();
        Container::setInstance($this->app);
        $this->app->instance('config', new Config([
            'cache' => [
                'default' => 'locks',
                'prefix' => 'unused_cache_prefix',
                'stores' => [
                    'locks' => [
                        'driver' => 'redislock',
                        'servers' => $url,
                        'prefix' => $this->prefix,
                    ],
                    'locks_with_entries' => [
                        'driver' => 'redislock',
                        'servers' => $url,
                        'prefix' => $this->prefix,
                        'store' => 'array',
                    ],
                    'locks_short_renew' => [
                        'driver' => 'redislock',
                        'servers' => $url,
                        'prefix' => $this->prefix,
                        'auto_renew_ttl' => self::SHORT_RENEW_TTL,
                    ],
                    'locks_slow_fallback' => [
                        'driver' => 'redislock',
                        'servers' => $url,
                        'prefix' => $this->prefix,
                        'options' => ['retry_delay' => 5.0],
                    ],
                    'array' => [
                        'driver' => 'array',
                    ],
                ],
            ],
        ]));
        $this->app->singleton('cache', fn ($app) => new CacheManager($app));

        $provider = new RedisLockServiceProvider($this->app);
        $provider->register();
        $provider->boot();

        Facade::clearResolvedInstances();
        Facade::setFacadeApplication($this->app);
    }

    /** Forgets the container and the facades' instances. */
    protected function tearDown(): void
    {
        Facade::clearResolvedInstances();
        Facade::setFacadeApplication(null);
        Container::setInstance(null);

        parent::tearDown();
    }

    /** The Redis URL of this run. */
    protected function url(): string
    {
        return bridge_test_server()->url();
    }

    /** One Redis command on the run's server (a plain RESP client, no lock logic). */
    protected function redis(string ...$args): mixed
    {
        return redis_cmd($this->url(), ...$args);
    }

    /** Remaining ms of the Redis key of lock $name (PTTL: -2 missing, -1 no expiry). */
    protected function pttl(string $name): int
    {
        return (int) $this->redis('PTTL', $this->prefix . $name);
    }

    /** Seconds since $start (an hrtime(true) value). */
    protected static function since(int $start): float
    {
        return (hrtime(true) - $start) / 1e9;
    }

    /**
     * Runs PHP code in a new php process with the extension, the Illuminate
     * cache and the bridge loadable; $input is JSON-encoded into $input in
     * the child. Returns the process (stdout is pipe 1) so the caller can
     * read while it runs.
     *
     * @return array{0: resource, 1: array<int, resource>}
     */
    protected function startChild(string $code, array $input): array
    {
        $file = tempnam(sys_get_temp_dir(), 'redislock-bridge-child-');
        $bridge = dirname(__DIR__, 2);
        file_put_contents($file, "<?php\n"
            . "require '/usr/share/php/Illuminate/Support/autoload.php';\n"
            . "require '/usr/share/php/Illuminate/Cache/autoload.php';\n"
            . 'require ' . var_export($bridge . '/autoload.php', true) . ";\n"
            . "unlink(__FILE__);\n"
            . '$input = json_decode(' . var_export(json_encode($input), true) . ", true);\n"
            . $code);
        $cmd = [PHP_BINARY, '-d', 'extension=' . self::extensionPath(), '-d', 'display_errors=stderr', $file];
        $proc = proc_open($cmd, [0 => ['file', '/dev/null', 'r'], 1 => ['pipe', 'w'], 2 => ['pipe', 'w']], $pipes);
        $this->assertIsResource($proc, 'cannot start a php child');

        return [$proc, $pipes];
    }

    /**
     * Waits for a child to end: [exit code, stdout, stderr].
     *
     * @param  array{0: resource, 1: array<int, resource>}  $child
     * @return array{0: int, 1: string, 2: string}
     */
    protected function finishChild(array $child): array
    {
        [$proc, $pipes] = $child;
        $out = stream_get_contents($pipes[1]);
        $err = stream_get_contents($pipes[2]);
        fclose($pipes[1]);
        fclose($pipes[2]);

        return [proc_close($proc), (string) $out, (string) $err];
    }

    /** Runs a child to its end and returns its stdout decoded as JSON. */
    protected function runChild(string $code, array $input): array
    {
        [$exit, $out, $err] = $this->finishChild($this->startChild($code, $input));
        $this->assertSame(0, $exit, "child failed: $out $err");
        $result = json_decode($out, true);
        $this->assertIsArray($result, "child printed no JSON: $out $err");

        return $result;
    }

    /**
     * The redislock.so this process loaded: REDISLOCK_SO, else the
     * `-d extension=...` of this process's command line
     * (scripts/bridge-tests.sh passes it), else target/release/redislock.so.
     */
    private static function extensionPath(): string
    {
        $so = getenv('REDISLOCK_SO');
        if (is_string($so) && $so !== '') {
            return $so;
        }
        $args = explode("\0", (string) @file_get_contents('/proc/self/cmdline'));
        foreach ($args as $i => $arg) {
            if ($arg === '-d') {
                $arg = $args[$i + 1] ?? '';
            } elseif (str_starts_with($arg, '-d')) {
                $arg = substr($arg, 2);
            }
            if (preg_match('/^extension\s*=\s*(.*redislock[^\/]*\.so)$/', $arg, $m)) {
                return $m[1];
            }
        }

        return dirname(__DIR__, 3) . '/target/release/redislock.so';
    }
}

<?php

namespace RedisLock\Bridge\Tests\Laravel;

use Illuminate\Support\Facades\Cache;
use RedisLock\Bridge\Laravel\RedisLockStore;

/**
 * A store's configuration is checked when the store is built
 * (`Cache::store()`), before any lock: unknown keys and RedisLock options
 * are refused naming the nearest valid name, option values the extension
 * refuses likewise, `connection` and `servers` together, and connections
 * that cannot be Laravel's keys. Building sends nothing to Redis.
 */
class StoreConfigTest extends LaravelTestCase
{
    /** Builds the store `probe` from $config (the driver is added). */
    private function build(array $config): RedisLockStore
    {
        $this->app['config']->set('cache.stores.probe', ['driver' => 'redislock'] + $config);

        return Cache::store('probe')->getStore();
    }

    /** Asserts that building $config throws InvalidArgumentException with $message (exactly, or containing it). */
    private function assertRefused(array $config, string $message, bool $exact = false): void
    {
        try {
            $this->build($config);
            $this->fail('the config was accepted: ' . json_encode(array_keys($config)));
        } catch (\InvalidArgumentException $e) {
            $exact
                ? $this->assertSame($message, $e->getMessage())
                : $this->assertStringContainsString($message, $e->getMessage());
        }
    }

    public function testAnUnknownKeyNamesTheNearestValidKey(): void
    {
        $this->assertRefused(['server' => $this->url()], 'redislock cache store: unknown key "server" (did you mean "servers"?)', true);
        $this->assertRefused(['conection' => 'default'], 'unknown key "conection" (did you mean "connection"?)');
        $this->assertRefused(['auto_renew' => 5], 'unknown key "auto_renew" (did you mean "auto_renew_ttl"?)');
        $this->assertRefused(['colour' => 'blue'], 'unknown key "colour" (valid keys: driver, connection, lock_connection, servers,');
    }

    public function testAnUnknownOptionNamesTheNearestValidOption(): void
    {
        $this->assertRefused(
            ['servers' => $this->url(), 'options' => ['retry_dealy' => 0.5]],
            'redislock cache store: unknown option "retry_dealy" in "options" (did you mean "retry_delay"?)',
            true,
        );
        $this->assertRefused(['options' => ['autorenew' => true]], 'unknown option "autorenew" in "options" (did you mean "auto_renew"?)');
        $this->assertRefused(['options' => ['tll' => 1]], 'unknown option "tll" in "options" (options: prefix, auto_release,');
        $this->assertRefused(['options' => ['x']], 'unknown option "0" in "options"');
    }

    public function testAnOptionValueTheExtensionRefusesIsRefused(): void
    {
        $this->assertRefused(['options' => ['retry_delay' => -1]], 'bad value of option "retry_delay": ');
        $this->assertRefused(['options' => ['fencing' => 'false-ish']], 'bad value of option "fencing": ');
    }

    /**
     * Options the bridge sets on every lock (prefix, owner, reentrant,
     * auto_release) are refused, saying what to use instead: at da6b638
     * they built without complaint and were dropped (the key was the
     * store's prefix, the owner random).
     */
    public function testOptionsTheBridgeSetsAreRefusedNotDropped(): void
    {
        $refusals = [
            'prefix' => 'the store\'s own "prefix" key',
            'owner' => 'Cache::lock($name, $seconds, $owner)',
            'reentrant' => 'never reentrant',
            'auto_release' => 'outlive their object',
        ];
        foreach ($refusals as $option => $instead) {
            $value = $option === 'prefix' || $option === 'owner' ? 'myapp:' : true;
            $this->assertRefused(
                ['servers' => $this->url(), 'options' => [$option => $value]],
                sprintf('redislock cache store: option "%s" cannot be set in "options": ', $option),
            );
            $this->assertRefused(['servers' => $this->url(), 'options' => [$option => $value]], $instead);
        }
    }

    /** Valid configs build (driver is a valid key), and building sends nothing: a closed port is fine. */
    public function testAValidConfigBuildsWithoutTalkingToRedis(): void
    {
        $store = $this->build([
            'servers' => 'redis://127.0.0.1:1',
            'options' => ['retry_delay' => 0.5, 'on_lost' => 'interrupt', 'sentinel_password' => 'only checked at use'],
            'prefix' => 'p:', 'store' => 'array', 'auto_renew_ttl' => 3, 'events' => false,
        ]);
        $this->assertSame('p:', $store->getPrefix());
        $this->assertNull($store->getConnectionName());
        $this->expectException(\ValueError::class);  // the combination, at first use
        $store->lock('x', 1)->get();
    }

    public function testConnectionAndServersTogetherAreRefused(): void
    {
        $this->app['config']->set('database.redis', ['default' => ['host' => '127.0.0.1', 'port' => 6379]]);
        $this->assertRefused(
            ['connection' => 'default', 'servers' => $this->url()],
            'redislock cache store: set either "connection" (a database.redis connection) or "servers" (Redis URLs), not both',
            true,
        );
        $this->assertRefused(['connection' => 'default', 'options' => ['cluster' => true]], 'the option "cluster" does not go with "connection"');
    }

    public function testConnectionsThatCannotBeUsedAreRefused(): void
    {
        $this->assertRefused(['connection' => 'default'], 'redislock cache store: "connection" needs the application\'s database.redis configuration', true);
        $this->app['config']->set('database.redis', [
            'client' => 'phpredis',
            'options' => ['prefix' => 'x_'],
            'default' => ['host' => '127.0.0.1', 'port' => 6379],
            'clusters' => ['shards' => [['host' => '127.0.0.1', 'port' => 7000]]],
        ]);
        $this->assertRefused(['connection' => 'cache'], 'the Redis connection "cache" is not configured in database.redis (connections: default)');
        $this->assertRefused(['connection' => 'options'], 'the Redis connection "options" is not configured');
        $this->assertRefused(['connection' => 'shards'], 'the Redis connection "shards" is a cluster');
        $this->assertRefused(['lock_connection' => ''], '"lock_connection" must name a connection of database.redis');
        $this->assertSame('x_laravel_cache:', $this->build(['connection' => 'default', 'prefix' => 'laravel_cache'])->getPrefix());
    }

    /**
     * Laravel 11+ adds `'store' => <the store's name>` to the config it
     * passes (Arr::add in CacheManager::resolve); that is not a store for
     * entries, so entries still say to set one (not "must use another driver").
     */
    public function testTheStoreNameLaravelAddsIsNotTheEntryStore(): void
    {
        $this->app['config']->set('cache.stores.probe', ['driver' => 'redislock', 'servers' => $this->url()]);
        $creator = (fn () => $this->customCreators['redislock'])->call(Cache::getFacadeRoot());
        $repository = $creator($this->app, ['driver' => 'redislock', 'servers' => $this->url(), 'store' => 'probe']);
        $this->assertNull($repository->getStore()->getEntryStoreName());
        $this->expectException(\LogicException::class);
        $this->expectExceptionMessage('set its "store" config key');
        $repository->get('k');
    }
}

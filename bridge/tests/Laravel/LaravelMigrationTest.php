<?php

namespace RedisLock\Bridge\Tests\Laravel;

use Illuminate\Cache\PhpRedisLock;
use Illuminate\Cache\RedisStore;
use Illuminate\Support\Facades\Cache;
use RedisLock\Bridge\Laravel\RedisLockLock;
use RedisLock\Bridge\Laravel\RedisLockStore;

/**
 * The drop-in switch: Laravel's own `redis` cache store (RedisStore on
 * RedisManager with phpredis, Laravel 8's default configuration, a
 * password and REDIS_DB 2) and the redislock store with
 * `'connection' => 'default'` lock the same Redis key
 * (`laravel_database_laravel_cache:NAME`, checked by name in database 2)
 * with the same value (the owner), so each excludes the other, and each
 * releases, checks and force-releases the other's locks by owner.
 */
class LaravelMigrationTest extends LaravelRedisTestCase
{
    /** Laravel's key for the lock `migrate`: connection prefix, cache prefix, ':', name. */
    private const KEY = 'laravel_database_laravel_cache:migrate';

    /** Laravel's own store, as `Cache::store('redis')` gives it. */
    private function laravel(): RedisStore
    {
        $store = Cache::store('redis')->getStore();
        $this->assertInstanceOf(RedisStore::class, $store);

        return $store;
    }

    /** The redislock store with `'connection' => 'default'`. */
    private function ours(): RedisLockStore
    {
        $store = Cache::store('locks')->getStore();
        $this->assertInstanceOf(RedisLockStore::class, $store);

        return $store;
    }

    /** Both locks of `migrate` are the key KEY of database 2, holding the owner. */
    public function testBothStoresLockTheSameKeyWithTheOwnerAsValue(): void
    {
        $this->assertSame(self::KEY, $this->ours()->lockKey('migrate'));

        $theirs = $this->laravel()->lock('migrate', 10);
        $this->assertInstanceOf(PhpRedisLock::class, $theirs);
        $this->assertTrue($theirs->get());
        $this->assertSame([self::KEY], $this->raw(self::DB)->keys('*'), 'Laravel\'s key, as Laravel writes it');
        $this->assertSame($theirs->owner(), $this->raw(self::DB)->get(self::KEY));
        $this->assertTrue($theirs->release());

        $ours = $this->ours()->lock('migrate', 10);
        $this->assertTrue($ours->get());
        $this->assertSame($ours->owner(), $this->raw(self::DB)->get(self::KEY), 'our lock is that key, holding our owner');
        $ttl = $this->raw(self::DB)->pttl(self::KEY);
        $this->assertGreaterThan(9000, $ttl);
        $this->assertLessThanOrEqual(10000, $ttl);
        $this->assertSame(0, $this->raw(0)->dbSize(), 'nothing in database 0');
        $this->assertTrue($ours->release());
        $this->assertSame(0, $this->raw(self::DB)->exists(self::KEY));
    }

    /** Ours held: Laravel's get() fails; after our release Laravel's succeeds. */
    public function testOurLockExcludesLaravels(): void
    {
        $ours = $this->ours()->lock('migrate', 10);
        $this->assertTrue($ours->get());
        $this->assertFalse($this->laravel()->lock('migrate', 10)->get());
        $this->assertFalse($this->laravel()->lock('migrate')->get(), 'nor without expiry (SETNX)');

        $this->assertTrue($ours->release());
        $theirs = $this->laravel()->lock('migrate', 10);
        $this->assertTrue($theirs->get());
        $this->assertTrue($theirs->release());
    }

    /** Laravel's held: ours fails; after Laravel's release ours succeeds. */
    public function testLaravelsLockExcludesOurs(): void
    {
        $theirs = $this->laravel()->lock('migrate', 10);
        $this->assertTrue($theirs->get());
        $this->assertFalse($this->ours()->lock('migrate', 10)->get());
        $this->assertFalse($this->ours()->lock('migrate')->get(), 'nor with an auto-renewed lease');
        $this->assertTrue($this->ours()->lock('migrate')->isLocked());

        $this->assertTrue($theirs->release());
        $ours = $this->ours()->lock('migrate', 10);
        $this->assertTrue($ours->get());
        $this->assertTrue($ours->release());
    }

    /** Locks without expiry ($seconds = 0) exclude each other too, both ways. */
    public function testLocksWithoutExpiryExcludeEachOther(): void
    {
        $theirs = $this->laravel()->lock('migrate');
        $this->assertTrue($theirs->get());
        $this->assertSame(-1, $this->raw(self::DB)->ttl(self::KEY), 'Laravel\'s SETNX: no expiry');
        $this->assertFalse($this->ours()->lock('migrate')->get());
        $this->assertTrue($this->ours()->lock('migrate')->isOwnedBy($theirs->owner()), 'a key without expiry');
        $this->assertTrue($theirs->release());

        $ours = $this->ours()->lock('migrate');
        $this->assertTrue($ours->get());
        $this->assertFalse($this->laravel()->lock('migrate')->get());
        $this->assertTrue($ours->release());
    }

    /** Each store releases, checks and force-releases the other's lock by its owner. */
    public function testOwnersWorkAcrossTheStores(): void
    {
        $ours = $this->ours()->lock('migrate', 10);
        $this->assertTrue($ours->get());
        $this->assertSame($ours->owner(), $this->laravel()->restoreLock('migrate', $ours->owner())->owner());
        $this->assertFalse($this->laravel()->restoreLock('migrate', 'someone else')->release());
        $this->assertTrue($this->laravel()->restoreLock('migrate', $ours->owner())->release(), 'Laravel\'s Lua release');
        $this->assertSame(0, $this->raw(self::DB)->exists(self::KEY));

        $theirs = $this->laravel()->lock('migrate', 10);
        $this->assertTrue($theirs->get());
        $restored = $this->ours()->restoreLock('migrate', $theirs->owner());
        $this->assertInstanceOf(RedisLockLock::class, $restored);
        $this->assertTrue($restored->isOwnedByCurrentProcess());
        $this->assertFalse($this->ours()->restoreLock('migrate', 'someone else')->release());
        $this->assertTrue($restored->release(), 'our compare-and-delete on Laravel\'s value');
        $this->assertSame(0, $this->raw(self::DB)->exists(self::KEY));

        $this->assertTrue($this->laravel()->lock('migrate', 10)->get());
        $this->ours()->lock('migrate')->forceRelease();
        $this->assertSame(0, $this->raw(self::DB)->exists(self::KEY), 'our forceRelease');
        $this->assertTrue($this->ours()->lock('migrate', 10)->get());
        $this->laravel()->lock('migrate')->forceRelease();
        $this->assertSame(0, $this->raw(self::DB)->exists(self::KEY), 'Laravel\'s forceRelease');
    }

    /** Our block() waiting on Laravel's lock gets it when that lock's lease ends (no release to wake it). */
    public function testOurBlockGetsLaravelsLockWhenItExpires(): void
    {
        $this->assertTrue($this->laravel()->lock('migrate', 1)->get());
        $start = hrtime(true);
        $ours = $this->ours()->lock('migrate', 10);
        $this->assertTrue($ours->block(5));
        $waited = (hrtime(true) - $start) / 1e9;
        $this->assertGreaterThan(0.5, $waited, 'it waited for Laravel\'s lease');
        $this->assertLessThan(3.0, $waited);
        $this->assertTrue($ours->release());
    }

    /**
     * Our block() waiting on Laravel's lock gets it soon after another
     * process releases it with Laravel's Lua release (which wakes nobody):
     * within the waiter's retry_delay (0.5 s).
     */
    public function testOurBlockGetsLaravelsLockSoonAfterItsRelease(): void
    {
        $theirs = $this->laravel()->lock('migrate', 30);
        $this->assertTrue($theirs->get());
        $code = '$r = new Redis(); $r->connect("127.0.0.1", (int) $argv[1]); $r->auth($argv[2]); $r->select((int) $argv[3]);'
            . ' usleep(300000); exit($r->eval($argv[4], [$argv[5], $argv[6]], 1) === 1 ? 0 : 1);';
        $child = proc_open(
            [PHP_BINARY, '-r', $code, (string) self::$server->port, self::PASSWORD, (string) self::DB,
                \Illuminate\Cache\LuaScripts::releaseLock(), self::KEY, $theirs->owner()],
            [0 => ['file', '/dev/null', 'r'], 1 => ['file', '/dev/null', 'w'], 2 => ['file', '/dev/null', 'w']],
            $pipes,
        );
        $this->assertIsResource($child);
        $start = hrtime(true);
        $ours = $this->ours()->lock('migrate', 10);
        $this->assertTrue($ours->block(5));
        $waited = (hrtime(true) - $start) / 1e9;
        $this->assertSame(0, proc_close($child), 'the child released Laravel\'s lock');
        $this->assertGreaterThan(0.25, $waited);
        $this->assertLessThan(1.3, $waited, 'the release + retry_delay + margin');
        $this->assertTrue($ours->release());
    }

    /**
     * add() goes to the entry store's own atomic add (Laravel's redis
     * store: one EVAL), not the repository's get-then-put fallback: the
     * scheduler's withoutOverlapping() and onOneServer() mutexes are adds.
     */
    public function testAddIsTheEntryStoresAtomicAdd(): void
    {
        $raw = $this->raw(self::DB + 1);
        $raw->rawCommand('CONFIG', 'RESETSTAT');
        $this->assertTrue(Cache::store('locks')->add('mutex', 'v', 60));
        $this->assertFalse(Cache::store('locks')->add('mutex', 'w', 60));
        $stats = $raw->info('commandstats');
        $this->assertStringStartsWith('calls=2,', $stats['cmdstat_eval'] ?? '', 'two EVALs of RedisStore::add()');
        $this->assertArrayNotHasKey('cmdstat_get', $stats, 'no get-then-put');
        $this->assertSame('v', Cache::store('redis')->get('mutex'), 'the entry of Laravel\'s redis store');
    }

    /**
     * A copy of Laravel's redis store config with only the driver changed
     * (`connection` cache, `lock_connection` default) locks where Laravel
     * locks, and so does a connection given as a `url`.
     */
    public function testLockConnectionAndUrlConnectionsLockLaravelsKey(): void
    {
        $config = $this->app['config'];
        $config->set('cache.stores.copied', ['driver' => 'redislock', 'connection' => 'cache', 'lock_connection' => 'default']);
        $config->set('database.redis.from_url', ['url' => $this->url() . '/' . self::DB]);
        $config->set('cache.stores.url_laravel', ['driver' => 'redis', 'connection' => 'from_url']);
        $config->set('cache.stores.url_ours', ['driver' => 'redislock', 'connection' => 'from_url']);

        $this->assertSame(self::KEY, Cache::store('copied')->getStore()->lockKey('migrate'));
        $theirs = $this->laravel()->lock('migrate', 10);
        $this->assertTrue($theirs->get());
        $this->assertFalse(Cache::store('copied')->lock('migrate', 10)->get());
        $this->assertFalse(Cache::store('url_ours')->lock('migrate', 10)->get());
        $this->assertTrue($theirs->release());

        $ours = Cache::store('url_ours')->lock('migrate', 10);
        $this->assertTrue($ours->get());
        $this->assertSame($ours->owner(), $this->raw(self::DB)->get(self::KEY));
        $this->assertFalse(Cache::store('url_laravel')->lock('migrate', 10)->get());
        $this->assertTrue($ours->release());
    }
}

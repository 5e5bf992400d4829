<?php

declare(strict_types=1);

namespace RedisLock\Bridge\Tests\Laravel;

use Illuminate\Contracts\Cache\LockTimeoutException;
use Illuminate\Contracts\Redis\LimiterTimeoutException;
use Illuminate\Support\Facades\Cache;
use RedisLock\Bridge\Laravel\RedisLockStore;
use RedisLock\Bridge\Tests\MemoryLogger;

/**
 * The Laravel store logs through the application's `log` (here an
 * in-memory PSR-3 logger bound as `log`), against the password-protected
 * redis-server of LaravelRedisTestCase: waits over `log_wait_over`
 * (notice), lost leases and holds past their ttl (warning), each once;
 * nothing under the threshold, for auto-renewed holds, or without a
 * logger; never the password or the owner.
 */
final class LogTest extends LaravelRedisTestCase
{
    /** The Redis key of lock $name in the `logged` store (Laravel's layout, database 2). */
    private const KEY_PREFIX = 'laravel_database_laravel_cache:';

    private MemoryLogger $logger;

    protected function setUp(): void
    {
        parent::setUp();
        $this->logger = new MemoryLogger(self::PASSWORD);
        $this->app->instance('log', $this->logger);
        $this->app['config']->set('cache.stores.logged', [
            'driver' => 'redislock', 'connection' => 'default', 'options' => ['log_wait_over' => 0.2],
        ]);
    }

    private function store(string $name = 'logged'): RedisLockStore
    {
        $store = Cache::store($name)->getStore();
        $this->assertInstanceOf(RedisLockStore::class, $store);

        return $store;
    }

    /**
     * A name with a PSR-3 placeholder and a newline is plain, escaped text
     * in the message (Monolog's PsrLogMessageProcessor fills `{event}`,
     * and a newline forges a second line); the context keeps it as given.
     * At da6b638 it went into the message raw.
     */
    public function testANameIsPlainEscapedTextInTheMessage(): void
    {
        $name = "report:{event}\nforged \"x\" \\ \x01";
        $holder = $this->store()->lock($name, 10, 'holder-owner');
        $this->assertTrue($holder->get());
        try {
            $this->store()->lock($name, 10)->block(0.3);
            $this->fail('the lock was taken twice');
        } catch (LockTimeoutException) {
        }
        $this->assertTrue($holder->release());
        [$record] = $this->logger->event('long_wait');
        $this->assertStringContainsString('the lock "report:\\{event\\}\\nforged \\"x\\" \\\\ \\x01"', $record['message']);
        $this->assertStringNotContainsString("\n", $record['message']);
        $this->assertStringNotContainsString('{event}', $record['message']);
        $this->assertSame($name, $record['context']['lock']);
    }

    /**
     * A server that can evict a held lock (maxmemory with allkeys-lru) is
     * one `unsafe_server` warning per process and server, whatever the
     * number of acquires (option unsafe_server "warn", the default), with
     * the reason and the fix; the lock is taken all the same.
     */
    public function testAnEvictingServerIsOneWarningPerProcess(): void
    {
        $server = \TestRedis::start(['--maxmemory', '64mb', '--maxmemory-policy', 'allkeys-lru', '--appendonly', 'yes']);
        $this->app['config']->set('cache.stores.evicting', ['driver' => 'redislock', 'servers' => $server->url()]);
        for ($i = 0; $i < 3; $i++) {
            $lock = $this->store('evicting')->lock('evict-me', 10);
            $this->assertTrue($i === 0 ? $lock->get() : $lock->block(1));
            $this->assertTrue($lock->release());
        }
        $records = $this->logger->event('unsafe_server');
        $this->assertCount(1, $records);
        [$record] = $records;
        $this->assertSame('warning', $record['level']);
        $this->assertSame(['event' => 'unsafe_server', 'server' => $server->url() . '/0', 'reason' => 'eviction'],
            array_intersect_key($record['context'], ['event' => 1, 'server' => 1, 'reason' => 1]));
        $this->assertStringContainsString('maxmemory-policy allkeys-lru', $record['message']);
        $this->assertStringContainsString('set maxmemory-policy noeviction', $record['message']);
        $this->assertSame([], $this->logger->event('long_wait'));
    }

    public function testAWaitOverTheThresholdIsANoticeAcquiredOrNot(): void
    {
        $holder = $this->store()->lock('report', 10, 'holder-owner');
        $this->assertTrue($holder->get());
        try {
            $this->store()->lock('report', 10)->block(0.3);
            $this->fail('the lock was taken twice');
        } catch (LockTimeoutException) {
        }
        $this->assertTrue($holder->release());
        [$timedOut] = $this->logger->event('long_wait');
        $this->assertSame('notice', $timedOut['level']);
        $this->assertMatchesRegularExpression('/^redislock: waited 0\.3\d* s for the lock "report" and gave up \(timeout 0\.3 s\)$/', $timedOut['message']);
        $this->assertSame('report', $timedOut['context']['lock']);
        $this->assertSame('lock', $timedOut['context']['primitive']);
        $this->assertFalse($timedOut['context']['acquired']);
        $this->assertSame(0.3, $timedOut['context']['timeout']);
        $this->assertSame(10.0, $timedOut['context']['ttl']);
        $this->assertGreaterThanOrEqual(0.29, $timedOut['context']['wait']);

        // A holder whose lease ends in 0.5 s: the waiter gets the lock then.
        $short = $this->store()->lock('short', 0.5);
        $this->assertTrue($short->get());
        $this->assertTrue($this->store()->lock('short', 10)->block(3));
        $acquired = $this->logger->event('long_wait')[1] ?? null;
        $this->assertNotNull($acquired, 'the wait for "short" is logged');
        $this->assertTrue($acquired['context']['acquired']);
        $this->assertGreaterThan(0.3, $acquired['context']['wait']);
        $this->assertLessThan(3.0, $acquired['context']['wait']);
        $this->assertMatchesRegularExpression('/^redislock: waited 0\.\d+ s for the lock "short"$/', $acquired['message']);
    }

    public function testAWaitUnderTheThresholdIsNotLogged(): void
    {
        $lock = $this->store()->lock('quick', 10);
        $this->assertTrue($lock->block(5));
        $this->assertTrue($lock->release());
        $this->assertTrue($this->store()->lock('quick', 10)->get(fn () => true));
        $this->assertSame([], $this->logger->records);
    }

    public function testALeaseDeletedByOthersIsALostLeaseOnceAtRelease(): void
    {
        $lock = $this->store()->lock('deleted', 10);
        $this->assertTrue($lock->get());
        $this->raw(self::DB)->del(self::KEY_PREFIX . 'deleted');
        $this->assertFalse($lock->release());
        $this->assertFalse($lock->release(), 'a second release');
        $this->assertCount(1, $this->logger->records);
        [$lost] = $this->logger->event('lost_lease');
        $this->assertSame('warning', $lost['level']);
        $this->assertStringStartsWith('redislock: the lock "deleted" was no longer ours at its release, ', $lost['message']);
        $this->assertStringEndsWith(' s after it was taken (ttl 10 s): another holder took it or it was deleted', $lost['message']);
        $this->assertSame(['event', 'lock', 'primitive', 'action', 'held_for', 'ttl', 'lost'], array_keys($lost['context']));
        $this->assertSame('release', $lost['context']['action']);
        $this->assertSame(10.0, $lost['context']['ttl']);
        $this->assertTrue($lost['context']['lost']);
        $this->assertLessThan(5.0, $lost['context']['held_for']);
    }

    public function testALeaseTakenOverIsALostLeaseAtRefreshNotAgainAtRelease(): void
    {
        $lock = $this->store()->lock('taken', 10);
        $this->assertTrue($lock->get());
        $this->raw(self::DB)->set(self::KEY_PREFIX . 'taken', 'someone-else');
        $this->assertFalse($lock->refresh());
        $this->assertFalse($lock->release());
        $this->assertCount(1, $this->logger->records, $this->logger->dump());
        $this->assertSame('refresh', $this->logger->event('lost_lease')[0]['context']['action']);
    }

    public function testAHoldPastItsTtlIsALongHold(): void
    {
        $lock = $this->store()->lock('slow', 0.2);
        $this->assertTrue($lock->get());
        usleep(300_000);
        $this->assertFalse($lock->release(), 'the lease ran out');
        $this->assertCount(1, $this->logger->records, $this->logger->dump());
        [$long] = $this->logger->event('long_hold');
        $this->assertSame('warning', $long['level']);
        $this->assertMatchesRegularExpression(
            '/^redislock: the lock "slow" was held 0\.3\d* s, longer than its ttl of 0\.2 s; its lease had run out before its release$/',
            $long['message'],
        );
        $this->assertTrue($long['context']['lost']);
        $this->assertSame(0.2, $long['context']['ttl']);

        // A refresh moves the lease: held 0.3 s in all, never past a lease.
        $lock = $this->store()->lock('refreshed', 0.2);
        $this->assertTrue($lock->get());
        usleep(150_000);
        $this->assertTrue($lock->refresh());
        usleep(150_000);
        $this->assertTrue($lock->release());
        $this->assertCount(1, $this->logger->records, 'nothing more: ' . $this->logger->dump());
    }

    public function testAnAutoRenewedHoldIsNeverALongHold(): void
    {
        $this->app['config']->set('cache.stores.renewed', [
            'driver' => 'redislock', 'connection' => 'default', 'auto_renew_ttl' => 0.3, 'options' => ['log_wait_over' => 0.2],
        ]);
        $lock = $this->store('renewed')->lock('forever');
        $this->assertTrue($lock->get());
        usleep(500_000);
        $this->assertTrue($lock->release(), 'renewed past its 0.3 s lease');
        $this->assertSame([], $this->logger->records);

        // ... but its loss is a lost lease, with no ttl.
        $this->assertTrue($lock->get());
        $this->raw(self::DB)->del(self::KEY_PREFIX . 'forever');
        $this->assertFalse($lock->release());
        [$lost] = $this->logger->event('lost_lease');
        $this->assertNull($lost['context']['ttl']);
        $this->assertStringContainsString('(renewed lease)', $lost['message']);
    }

    public function testTheFunnelLogsLongWaitsAsPermits(): void
    {
        $funnel = fn () => $this->store()->funnel('imports')->limit(1)->block(0.3)->releaseAfter(10);
        $funnel()->then(function () use ($funnel) {
            try {
                $funnel()->then(fn () => $this->fail('two slots of a funnel of one'));
            } catch (LimiterTimeoutException) {
            }
        });
        $this->assertCount(1, $this->logger->records, $this->logger->dump());
        [$wait] = $this->logger->event('long_wait');
        $this->assertSame('permit', $wait['context']['primitive']);
        $this->assertSame('imports', $wait['context']['lock']);
        $this->assertFalse($wait['context']['acquired']);
        $this->assertSame(10.0, $wait['context']['ttl']);
        $this->assertStringStartsWith('redislock: waited 0.3', $wait['message']);
        $this->assertStringContainsString('for a permit of the semaphore "imports" and gave up', $wait['message']);
    }

    public function testTheThresholdIsConfigurableAndNullTurnsWaitsOff(): void
    {
        $this->app['config']->set('cache.stores.quiet', [
            'driver' => 'redislock', 'connection' => 'default', 'options' => ['log_wait_over' => null],
        ]);
        $this->app['config']->set('cache.stores.default_threshold', ['driver' => 'redislock', 'connection' => 'default']);
        foreach (['quiet', 'default_threshold'] as $store) {
            $holder = $this->store($store)->lock('busy', 10);
            $this->assertTrue($holder->get());
            try {
                $this->store($store)->lock('busy', 10)->block(0.3);
                $this->fail('the lock was taken twice');
            } catch (LockTimeoutException) {
            }
            $this->assertTrue($holder->release());
        }
        $this->assertSame([], $this->logger->records, 'null: never; the default: over 1 s');
    }

    public function testWithoutALoggerNothingIsLogged(): void
    {
        $this->app->offsetUnset('log');
        $this->assertFalse($this->app->bound('log'));
        $lock = $this->store()->lock('unlogged', 10);
        $this->assertTrue($lock->get());
        $this->raw(self::DB)->del(self::KEY_PREFIX . 'unlogged');
        $this->assertFalse($lock->release());
        $this->assertSame([], $this->logger->records);
    }

    public function testABadThresholdIsRefusedWhenTheStoreIsBuilt(): void
    {
        foreach ([-1, 'soon', [1]] as $bad) {
            try {
                new RedisLockStore(null, ['servers' => $this->url(), 'options' => ['log_wait_over' => $bad]]);
                $this->fail('built with log_wait_over ' . var_export($bad, true));
            } catch (\InvalidArgumentException $e) {
                $this->assertStringStartsWith('redislock cache store: option "log_wait_over" must be a number of seconds', $e->getMessage());
            }
        }
        try {
            new RedisLockStore(null, ['servers' => $this->url(), 'options' => ['log_wait_ovr' => 2]]);
            $this->fail('built with a typo');
        } catch (\InvalidArgumentException $e) {
            $this->assertStringContainsString('unknown option "log_wait_ovr" in "options" (did you mean "log_wait_over"?)', $e->getMessage());
        }
        $store = new RedisLockStore(null, ['servers' => $this->url(), 'options' => ['log_wait_over' => '2.5']]);
        $this->assertTrue($store->lock('fine', 10)->get(fn () => true), 'the option never reaches the extension');
    }

    public function testNoSecretIsLoggedOrDumped(): void
    {
        $lock = $this->store()->lock('secretive', 0.2, 'owner-label-77');
        $this->assertTrue($lock->get());
        try {
            $this->store()->lock('secretive', 10, 'owner-label-78')->block(0.3);
        } catch (LockTimeoutException) {
        }
        $this->raw(self::DB)->set(self::KEY_PREFIX . 'secretive', 'someone-else');
        $this->assertFalse($lock->release());
        $this->assertCount(2, $this->logger->records, $this->logger->dump());
        $this->assertStringNotContainsString(self::PASSWORD, $this->logger->dump());
        $this->assertStringNotContainsString('owner-label-7', $this->logger->dump(), 'owners are never logged');
        // The logger (it holds the password here, as Laravel's LogManager
        // holds the application's config) is not in the objects' properties.
        $store = $this->store();
        foreach ([var_export($store, true), var_export($lock, true), print_r($store, true),
            var_export($store->funnel('x'), true), json_encode($store), print_r($lock, true)] as $text) {
            $this->assertStringNotContainsString(self::PASSWORD, $text);
            $this->assertStringNotContainsString('MemoryLogger', $text);
        }
    }
}

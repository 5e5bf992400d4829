<?php

namespace RedisLock\Bridge\Tests\Laravel;

use Illuminate\Cache\CacheManager;
use Illuminate\Config\Repository as Config;
use Illuminate\Container\Container;
use Illuminate\Contracts\Redis\LimiterTimeoutException;
use Illuminate\Support\Facades\Cache;
use RedisLock\Bridge\Laravel\ConcurrencyLimiterBuilder;
use RedisLock\Bridge\Laravel\RedisLockServiceProvider;
use RedisLock\Semaphore;

/**
 * The `redislock` store's funnel(), Laravel's `Redis::funnel()` on the
 * extension's semaphore: the callback's value passes through, a full
 * funnel times out with Laravel's LimiterTimeoutException (or calls the
 * failure callback with it), a waiter in another process is woken when a
 * slot is given back, at most N callbacks run at once across processes, a
 * crashed job's slot comes back at its lease end, and it works on a Redis
 * Cluster.
 */
class FunnelTest extends LaravelTestCase
{
    /** The funnel's semaphore key (holders) for $name under this test's prefix. */
    private function holders(string $name): string
    {
        return $this->prefix . $name . '~~s';
    }

    /** A RedisLock\Semaphore on the funnel $name, to fill it from the test. */
    private function semaphore(string $name, int $limit, float $ttl = 30.0): Semaphore
    {
        return new Semaphore($name, $limit, $ttl, $this->url(), ['prefix' => $this->prefix]);
    }

    public function testTheCallbacksValuePassesThroughAndTheSlotIsGivenBack(): void
    {
        $funnel = Cache::store('locks')->funnel('import');
        $this->assertInstanceOf(ConcurrencyLimiterBuilder::class, $funnel);
        $seen = null;
        $value = $funnel->limit(2)->block(1)->releaseAfter(30)->then(function () use (&$seen) {
            $seen = (int) $this->redis('ZCOUNT', $this->holders('import'), '(0', '+inf');

            return ['done' => 42];
        });
        $this->assertSame(['done' => 42], $value);
        $this->assertSame(1, $seen, 'the callback ran holding one slot');
        $this->assertSame(0, (int) $this->redis('ZCOUNT', $this->holders('import'), '(0', '+inf'), 'the slot was given back');
    }

    public function testAFullFunnelTimesOutWithLaravelsException(): void
    {
        $a = $this->semaphore('full', 2);
        $b = $this->semaphore('full', 2);
        $this->assertTrue($a->acquire() && $b->acquire());
        $ran = false;
        $start = hrtime(true);
        try {
            Cache::store('locks')->funnel('full')->limit(2)->block(0.3)->then(function () use (&$ran) {
                $ran = true;
            });
            $this->fail('no LimiterTimeoutException');
        } catch (LimiterTimeoutException $e) {
            $this->assertStringContainsString('[full]', $e->getMessage());
        }
        $waited = self::since($start);
        $this->assertFalse($ran, 'the callback did not run');
        $this->assertGreaterThanOrEqual(0.29, $waited);
        $this->assertLessThan(1.0, $waited);
        $a->release();
        $b->release();
    }

    public function testTheFailureCallbackGetsTheTimeout(): void
    {
        $holder = $this->semaphore('busy', 1);
        $this->assertTrue($holder->acquire());
        $result = Cache::store('locks')->funnel('busy')->limit(1)->block(0)->then(
            fn () => 'ran',
            fn ($e) => $e instanceof LimiterTimeoutException ? 'failed' : 'wrong argument',
        );
        $this->assertSame('failed', $result);
        $holder->release();
        $this->assertSame('ran', Cache::store('locks')->funnel('busy')->limit(1)->block(0)->then(fn () => 'ran', fn () => 'failed'));
    }

    public function testACallbackThatThrowsGivesItsSlotBack(): void
    {
        try {
            Cache::store('locks')->funnel('throws')->limit(1)->then(function () {
                throw new \DomainException('job failed');
            });
            $this->fail('the exception did not pass through');
        } catch (\DomainException $e) {
            $this->assertSame('job failed', $e->getMessage());
        }
        $this->assertSame(0, (int) $this->redis('ZCOUNT', $this->holders('throws'), '(0', '+inf'));
    }

    public function testALimitIsRequired(): void
    {
        $this->expectException(\InvalidArgumentException::class);
        $this->expectExceptionMessage('limit($n)');
        Cache::store('locks')->funnel('no-limit')->then(fn () => null);
    }

    /**
     * A child waits in a full funnel of 1 (block 10); the parent gives its
     * slot back; the child's callback starts within 100 ms (Laravel's funnel
     * polls every 250 ms).
     */
    public function testAWaiterInAnotherProcessIsWokenWhenASlotIsGivenBack(): void
    {
        $holder = $this->semaphore('wake', 1);
        $this->assertTrue($holder->acquire());
        $child = $this->startChild(<<<'PHP'
            $store = new RedisLock\Bridge\Laravel\RedisLockStore(null, ['servers' => $input['url'], 'prefix' => $input['prefix']]);
            $at = $store->funnel('wake')->limit(1)->block(10)->then(fn () => hrtime(true));
            echo json_encode(['at' => $at]);
            PHP, ['url' => $this->url(), 'prefix' => $this->prefix]);
        $deadline = hrtime(true) + 10_000_000_000;
        while ((int) $this->redis('EXISTS', $this->holders('wake') . '~~q') === 0) {
            $this->assertLessThan($deadline, hrtime(true), 'the child never queued');
            usleep(2000);
        }
        $released = hrtime(true);
        $this->assertTrue($holder->release());
        [$exit, $out, $err] = $this->finishChild($child);
        $this->assertSame(0, $exit, "child failed: $out $err");
        $woken = (json_decode($out, true)['at'] - $released) / 1e9;
        $this->assertGreaterThan(0, $woken);
        $this->assertLessThan(0.1, $woken, sprintf('woken %.1f ms after the slot was given back', $woken * 1e3));
    }

    /**
     * Five `php` processes each run three 100 ms callbacks through a funnel
     * of 2 (block 10); every callback counts the callbacks running in Redis.
     * All 15 ran, never more than 2 at once, and 2 at once was reached.
     */
    public function testAtMostTheLimitRunAtOnceAcrossProcesses(): void
    {
        $children = [];
        for ($i = 0; $i < 5; $i++) {
            $children[] = $this->startChild(<<<'PHP'
                $store = new RedisLock\Bridge\Laravel\RedisLockStore(null, ['servers' => $input['url'], 'prefix' => $input['prefix']]);
                $redis = function (string ...$args) use ($input) {
                    $c = stream_socket_client(str_replace('redis://', 'tcp://', $input['url']));
                    $cmd = '*' . count($args) . "\r\n";
                    foreach ($args as $a) { $cmd .= '$' . strlen($a) . "\r\n$a\r\n"; }
                    fwrite($c, $cmd);
                    return (int) substr(fgets($c), 1);
                };
                $max = 0;
                $ran = 0;
                for ($job = 0; $job < 3; $job++) {
                    $store->funnel('pool')->limit(2)->block(10)->then(function () use ($redis, $input, &$max, &$ran) {
                        $max = max($max, $redis('INCR', $input['counter']));
                        usleep(100_000);
                        $redis('DECR', $input['counter']);
                        $ran++;
                    });
                }
                echo json_encode(['max' => $max, 'ran' => $ran]);
                PHP, ['url' => $this->url(), 'prefix' => $this->prefix, 'counter' => $this->prefix . 'running']);
        }
        $max = 0;
        $ran = 0;
        foreach ($children as $child) {
            [$exit, $out, $err] = $this->finishChild($child);
            $this->assertSame(0, $exit, "child failed: $out $err");
            $result = json_decode($out, true);
            $max = max($max, $result['max']);
            $ran += $result['ran'];
        }
        $this->assertSame(15, $ran, 'every callback ran');
        $this->assertSame(2, $max, 'never more than 2 at once, and 2 at once was reached');
    }

    /**
     * A job killed inside its callback (releaseAfter 1 s) keeps its slot
     * until its lease ends (plus the 0.5 s clock grace), then the next
     * waiter gets it, woken without polling.
     */
    public function testACrashedJobsSlotComesBackAtItsLeaseEnd(): void
    {
        [$exit] = $this->finishChild($this->startChild(<<<'PHP'
            $store = new RedisLock\Bridge\Laravel\RedisLockStore(null, ['servers' => $input['url'], 'prefix' => $input['prefix']]);
            $store->funnel('crash')->limit(1)->releaseAfter(1)->then(fn () => posix_kill(getmypid(), SIGKILL));
            PHP, ['url' => $this->url(), 'prefix' => $this->prefix]));
        $this->assertNotSame(0, $exit, 'the job was killed');
        $crashed = hrtime(true);
        $this->assertSame(1, (int) $this->redis('ZCOUNT', $this->holders('crash'), '(0', '+inf'), 'the killed job still holds its slot');
        $value = Cache::store('locks')->funnel('crash')->limit(1)->block(5)->then(fn () => self::since($crashed));
        $this->assertGreaterThan(0.9, $value, 'not before the lease ended');
        $this->assertLessThan(2.5, $value, 'soon after the lease and the grace ended');
    }

    /**
     * On a three-master Redis Cluster the funnel's keys share one hash slot
     * (Laravel's funnel fails with CROSSSLOT there unless the name is
     * hash-tagged by hand): a funnel of 1 runs its callback and refuses a
     * second one while the first runs.
     */
    public function testItWorksOnARedisCluster(): void
    {
        require_once dirname(__DIR__, 3) . '/php-tests/cluster.inc';
        $nodes = test_redis_cluster(3);
        $app = new Container();
        $app->instance('config', new Config(['cache' => ['default' => 'cluster', 'stores' => ['cluster' => [
            'driver' => 'redislock',
            'servers' => array_map(fn ($node) => $node->url(), $nodes),
            'options' => ['cluster' => true],
            'prefix' => $this->prefix,
        ]]]]));
        $app->singleton('cache', fn ($app) => new CacheManager($app));
        (new RedisLockServiceProvider($app))->register();
        $store = $app['cache']->store('cluster');

        $value = $store->funnel('cluster-jobs')->limit(1)->block(1)->then(function () use ($store, $nodes) {
            $inner = $store->funnel('cluster-jobs')->limit(1)->block(0)->then(fn () => 'ran twice', fn () => 'refused');
            $key = $this->prefix . '{cluster-jobs}~~s';

            return [$inner, redis_cmd(test_cluster_master($nodes, $key)->url(), 'ZCOUNT', $key, '(0', '+inf')];
        });
        $this->assertSame(['refused', 1], $value);
    }
}

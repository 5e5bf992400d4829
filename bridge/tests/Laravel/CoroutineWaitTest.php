<?php

namespace RedisLock\Bridge\Tests\Laravel;

use Illuminate\Contracts\Cache\LockTimeoutException;
use Illuminate\Contracts\Redis\LimiterTimeoutException;
use Illuminate\Support\Facades\Cache;
use RedisLock\Bridge\Laravel\CoroutineWait;
use RedisLock\Semaphore;
use Swoole\Coroutine;

require_once __DIR__ . '/Fixtures/SwooleCoroutine.php';

/**
 * block() and the funnel inside a Swoole coroutine (Octane on Swoole): the
 * extension refuses to wait there (it would stall every coroutine of the
 * worker), so the bridge tries every 50 ms and yields with
 * Coroutine::sleep() in between, and gets the lock when another coroutine
 * releases it. Swoole is a stand-in with its API names (Fixtures).
 */
class CoroutineWaitTest extends LaravelTestCase
{
    protected function tearDown(): void
    {
        Coroutine::$cid = -1;
        Coroutine::$slept = [];
        Coroutine::$onSleep = null;
        parent::tearDown();
    }

    public function testOutsideACoroutineTheExtensionWaits(): void
    {
        $this->assertNull(CoroutineWait::coroutineClass());
        $holder = Cache::lock('outside', 10);
        $this->assertTrue($holder->get());
        $this->expectException(LockTimeoutException::class);
        try {
            Cache::lock('outside', 10)->block(0.2);
        } finally {
            $this->assertSame([], Coroutine::$slept, 'slept outside a coroutine');
            $holder->release();
        }
    }

    public function testBlockYieldsAndGetsTheLockWhenAnotherCoroutineReleasesIt(): void
    {
        $holder = Cache::lock('yield', 10);
        $this->assertTrue($holder->get());
        Coroutine::$cid = 5;
        Coroutine::$onSleep = function () use ($holder) {
            if (count(Coroutine::$slept) === 3) {
                $holder->release();
            }
        };
        $this->assertSame('ran', Cache::lock('yield', 10)->block(5, fn () => 'ran'));
        $this->assertCount(3, Coroutine::$slept, 'tried once per yield until the release');
        foreach (Coroutine::$slept as $seconds) {
            $this->assertLessThanOrEqual(CoroutineWait::INTERVAL, $seconds);
        }
    }

    public function testBlockTimesOutInsideACoroutine(): void
    {
        $holder = Cache::lock('timeout', 10);
        $this->assertTrue($holder->get());
        Coroutine::$cid = 5;
        $started = microtime(true);
        try {
            Cache::lock('timeout', 10)->block(0.3);
            $this->fail('no LockTimeoutException');
        } catch (LockTimeoutException) {
            $this->assertGreaterThanOrEqual(0.29, microtime(true) - $started);
            $this->assertNotEmpty(Coroutine::$slept);
        } finally {
            Coroutine::$cid = -1;
            $holder->release();
        }
    }

    public function testTheFunnelYieldsToo(): void
    {
        $full = new Semaphore('slots', 1, 30.0, $this->url(), ['prefix' => $this->prefix]);
        $this->assertTrue($full->acquire());
        Coroutine::$cid = 9;
        Coroutine::$onSleep = function () use ($full) {
            if (count(Coroutine::$slept) === 2) {
                $full->release();
            }
        };
        $ran = Cache::store('locks')->funnel('slots')->limit(1)->block(5)->then(fn () => 'ran');
        $this->assertSame('ran', $ran);
        $this->assertCount(2, Coroutine::$slept);

        $this->assertTrue($full->acquire());
        Coroutine::$onSleep = null;
        $this->expectException(LimiterTimeoutException::class);
        try {
            Cache::store('locks')->funnel('slots')->limit(1)->block(0.2)->then(fn () => 'ran');
        } finally {
            $full->release();
        }
    }
}

<?php

namespace RedisLock\Bridge\Tests\Laravel;

use Illuminate\Support\Facades\Cache;

/**
 * Locks across PHP processes (child `php` processes with the extension
 * and the bridge): a waiter in another process is woken by the release
 * within milliseconds, a lock outlives the request that took it (released
 * later through restoreLock()), and a `$seconds = 0` lock frees soon after
 * its holder's process ends.
 */
class RedisLockProcessTest extends LaravelTestCase
{
    /** Rounds of the wake-up measurement. */
    private const WAKE_ROUNDS = 3;

    /** Longest accepted time from the start of release() to the child's return from block(). */
    private const WAKE_LIMIT_SECONDS = 0.2;

    /**
     * A child blocks with block(10) on a held lock (retry_delay 5 s, so
     * only the release's wake-up can end its wait in time); the parent
     * releases; the child's block() must return within 200 ms of the start
     * of release(). hrtime() is CLOCK_MONOTONIC, shared by all processes.
     * The measured times go to STDERR (PHPUnit's strict output check
     * watches stdout only).
     */
    public function testWaiterInAnotherProcessIsWokenByTheRelease(): void
    {
        $measured = [];
        for ($round = 0; $round < self::WAKE_ROUNDS; $round++) {
            $name = "wake-$round";
            $holder = Cache::store('locks_slow_fallback')->lock($name, 10);
            $this->assertTrue($holder->get());

            $child = $this->startChild(<<<'PHP'
                $store = new RedisLock\Bridge\Laravel\RedisLockStore(null, [
                    'servers' => $input['url'], 'prefix' => $input['prefix'], 'options' => ['retry_delay' => 5.0],
                ]);
                $lock = $store->lock($input['name'], 10);
                $start = hrtime(true);
                try {
                    $lock->block(10);
                    $at = hrtime(true);
                    $owned = $lock->isOwnedByCurrentProcess();
                    $lock->release();
                    echo json_encode(['at' => $at, 'waited' => ($at - $start) / 1e9, 'owned' => $owned]);
                } catch (Throwable $e) {
                    echo json_encode(['error' => get_class($e) . ': ' . $e->getMessage()]);
                }
                PHP, ['url' => $this->url(), 'prefix' => $this->prefix, 'name' => $name]);

            // The child is waiting once its token is in the lock's queue (K~~q).
            $deadline = hrtime(true) + 10 * 1_000_000_000;
            while ((int) $this->redis('ZCARD', $this->prefix . $name . '~~q') < 1) {
                $this->assertLessThan($deadline, hrtime(true), 'the child never queued');
                usleep(2000);
            }

            $releasedAt = hrtime(true);
            $this->assertTrue($holder->release());

            [$exit, $out, $err] = $this->finishChild($child);
            $this->assertSame(0, $exit, "child failed: $out $err");
            $result = json_decode($out, true);
            $this->assertIsArray($result, "child printed no JSON: $out $err");
            $this->assertArrayNotHasKey('error', $result, $out);
            $this->assertTrue($result['owned'], 'the woken child held the lock');

            $woken = ($result['at'] - $releasedAt) / 1e9;
            $measured[] = $woken;
            $this->assertGreaterThan(0, $woken, 'the child returned before the release');
            $this->assertLessThan(self::WAKE_LIMIT_SECONDS, $woken, sprintf('woken %.1f ms after the release', $woken * 1e3));
            $this->assertFalse(Cache::lock($name)->isLocked(), 'the child released');
        }

        fwrite(STDERR, sprintf(
            "\n[laravel bridge] waiter in another process woken %s ms after the start of release()\n",
            implode(' / ', array_map(fn ($s) => sprintf('%.2f', $s * 1e3), $measured))
        ));
    }

    /**
     * A lock taken in one request (a child process that then ends) stays
     * until released, as in Laravel: a later request releases it with
     * restoreLock($name, $owner).
     */
    public function testLockOutlivesTheRequestAndIsReleasedByOwnerLater(): void
    {
        $result = $this->runChild(<<<'PHP'
            $store = new RedisLock\Bridge\Laravel\RedisLockStore(null, ['servers' => $input['url'], 'prefix' => $input['prefix']]);
            $lock = $store->lock('job', 10);
            echo json_encode(['acquired' => $lock->get(), 'owner' => $lock->owner()]);
            PHP, ['url' => $this->url(), 'prefix' => $this->prefix]);
        $this->assertTrue($result['acquired']);

        $this->assertTrue(Cache::lock('job')->isLocked(), 'still held after the request ended');
        $this->assertTrue(Cache::lock('job')->isOwnedBy($result['owner']));
        $this->assertFalse(Cache::lock('job', 10)->get());

        $this->assertTrue(Cache::restoreLock('job', $result['owner'])->release());
        $this->assertFalse(Cache::lock('job')->isLocked());
    }

    /**
     * A `$seconds = 0` lock is renewed only while its process lives: after
     * the holder's process ended it frees within one lease (0.6 s here,
     * 15 s by default), never staying forever.
     */
    public function testNoExpiryLockFreesSoonAfterItsProcessEnds(): void
    {
        $result = $this->runChild(<<<'PHP'
            $store = new RedisLock\Bridge\Laravel\RedisLockStore(null, [
                'servers' => $input['url'], 'prefix' => $input['prefix'], 'auto_renew_ttl' => $input['ttl'],
            ]);
            $lock = $store->lock('daemon');
            $acquired = $lock->get();
            echo json_encode(['acquired' => $acquired, 'owned' => $lock->isOwnedByCurrentProcess()]);
            PHP, ['url' => $this->url(), 'prefix' => $this->prefix, 'ttl' => self::SHORT_RENEW_TTL]);
        $this->assertTrue($result['acquired']);
        $this->assertTrue($result['owned']);

        $ended = hrtime(true);
        while (Cache::lock('daemon')->isLocked()) {
            $this->assertLessThan(self::SHORT_RENEW_TTL + 0.3, self::since($ended), 'still held a lease after the holder ended');
            usleep(10_000);
        }
        $this->assertTrue(Cache::lock('daemon', 10)->get());
    }
}

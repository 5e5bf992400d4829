<?php

namespace RedisLock\Bridge\Tests\Symfony;

use PHPUnit\Framework\TestCase;
use RedisLock\Bridge\Symfony\RedisLockStore;
use Symfony\Component\Lock\Exception\LockAcquiringException;
use Symfony\Component\Lock\Exception\UnserializableKeyException;
use Symfony\Component\Lock\Key;
use Symfony\Component\Lock\LockFactory;
use Symfony\Component\Lock\SharedLockInterface;

/**
 * Symfony's shared locks (`acquireRead()`), user code unchanged, on the
 * store: a blocking `acquireRead(true)` sleeps without polling and is
 * woken by the writer's release in another process, a writer waiting in
 * another process keeps new readers out, promotion and demotion through
 * the Lock object (also a blocking promotion woken by the other reader's
 * release), and what a read lock cannot do (travel in a serialized Key,
 * run with options the extension refuses for read holds).
 */
final class SharedLockTest extends TestCase
{
    /** A waiter polling at Symfony's pace (every 100 ms) would send at least this many commands a second. */
    private const POLLS_PER_SECOND = 9;

    /** The longest a woken waiter may take after the release (a poll would come up to 100 ms late; the extension's fallback 5 s). */
    private const WOKEN_MS = 200;

    /**
     * A factory on $url. retry_delay 5 s: a waiter that was not woken by
     * the release would come seconds late.
     */
    private static function factory(string $url, array $options = []): LockFactory
    {
        return new LockFactory(new RedisLockStore($url, $options + ['retry_delay' => 5.0]));
    }

    /** @var array<int, int> pids of children not yet reaped */
    private array $children = [];

    /** A test that failed while a child waited leaves no child behind. */
    protected function tearDown(): void
    {
        foreach ($this->children as $pid) {
            posix_kill($pid, SIGKILL);
            pcntl_waitpid($pid, $status);
        }
        $this->children = [];
    }

    private static function lock(string $url, string $name, ?float $ttl = 30.0): SharedLockInterface
    {
        $lock = self::factory($url)->createLock($name, $ttl);
        self::assertInstanceOf(SharedLockInterface::class, $lock);

        return $lock;
    }

    public function testABlockingReadSleepsWithoutPollingAndIsWokenByTheWritersRelease(): void
    {
        // A private server: only this test's commands are counted.
        $server = \TestRedis::start(['--appendonly', 'yes']);
        $url = $server->url();
        $name = redislock_test_key('shared-blocking-read');
        $writer = self::lock($url, $name);
        $this->assertTrue($writer->acquire());
        try {
            $this->blockedReaderWokenByTheRelease($url, $name, $writer);
        } finally {
            $this->tearDown();
            unset($writer);   // while its server still runs
        }
    }

    private function blockedReaderWokenByTheRelease(string $url, string $name, SharedLockInterface $writer): void
    {

        $child = $this->inChild(function () use ($url, $name): array {
            $reader = self::lock($url, $name);
            redis_cmd($url, 'SET', "$name:ready", '1');   // about to block
            $reader->acquireRead(true);
            $at = hrtime(true);
            $held = $reader->isAcquired();
            $shared = self::lock($url, $name)->acquireRead();   // a second reader gets in beside it
            $reader->release();
            return ['at' => $at, 'held' => $held, 'shared' => $shared];
        });
        // Whatever way it waits (queued, or polling), it waits by now.
        $deadline = microtime(true) + 5;
        while (redis_cmd($url, 'GET', "$name:ready") === null) {
            $this->assertLessThan($deadline, microtime(true), 'the child never started');
            usleep(2000);
        }
        usleep(200000);

        $before = self::commandsProcessed($url);
        usleep(1000000);
        $sent = self::commandsProcessed($url) - $before - 1;   // minus the first INFO
        $this->assertLessThan(self::POLLS_PER_SECOND, $sent, "the blocked reader sent $sent commands in 1 s");
        $this->assertTrue($writer->isAcquired(), 'the writer still holds it while the reader waits');

        $released = hrtime(true);
        $writer->release();
        $report = $this->report($child);
        $this->assertTrue($report['held'], 'the woken reader holds a read lock');
        $this->assertTrue($report['shared'], 'and it is shared');
        $wokenMs = ($report['at'] - $released) / 1e6;
        $this->assertLessThan(self::WOKEN_MS, $wokenMs, "woken {$wokenMs} ms after the writer's release");
    }

    public function testAWriterWaitingInAnotherProcessKeepsNewReadersOut(): void
    {
        $url = bridge_test_server()->url();
        $name = redislock_test_key('shared-writer-waits');
        $reader = self::lock($url, $name);
        $this->assertTrue($reader->acquireRead());

        $child = $this->inChild(function () use ($url, $name): array {
            $writer = self::lock($url, $name);
            $writer->acquire(true);
            $got = hrtime(true);
            usleep(300000);
            $released = hrtime(true);
            $writer->release();
            return ['got' => $got, 'released' => $released];
        });
        $this->waitUntilQueued($url, $name);

        $late = self::lock($url, $name);
        $this->assertFalse($late->acquireRead(), 'a new reader got in while a writer waited');
        $this->assertFalse($late->isAcquired());
        $this->assertTrue($reader->isAcquired(), 'the reader already in keeps its lock');

        $reader->release();
        // Queued behind the writer: in once the writer is done, not before.
        $this->assertTrue($late->acquireRead(true));
        $entered = hrtime(true);
        $report = $this->report($child);
        $this->assertGreaterThanOrEqual($report['released'], $entered, 'the new reader got in before the writer left');
        $this->assertLessThan(self::WOKEN_MS, ($entered - $report['released']) / 1e6, 'woken by the writer\'s release');
        $late->release();
    }

    public function testPromotionAndDemotionThroughTheLock(): void
    {
        $url = bridge_test_server()->url();
        $name = redislock_test_key('shared-promote');
        $lock = self::lock($url, $name, 20.0);
        $other = self::lock($url, $name);

        // The only reader (a lone reader: the key holds "~~read:<token>:<lease
        // end>") is promoted: the key holds its owner token again.
        $this->assertTrue($lock->acquireRead());
        $this->assertStringStartsWith('~~read:', redis_cmd($url, 'GET', $name));
        $this->assertTrue($lock->acquire());
        $this->assertStringStartsNotWith('~~read', redis_cmd($url, 'GET', $name));
        $this->assertGreaterThan(18000, (int) redis_cmd($url, 'PTTL', $name), 'the promoted lease is the Lock\'s ttl');
        $this->assertFalse($other->acquireRead(), 'a reader beside the promoted writer');

        // Demoted: it reads again, and another reader joins.
        $this->assertTrue($lock->acquireRead());
        $this->assertSame('~~read', redis_cmd($url, 'GET', $name));
        $this->assertTrue($lock->isAcquired());
        $this->assertEqualsWithDelta(20, $lock->getRemainingLifetime(), 1);
        $this->assertTrue($other->acquireRead());

        // Beside another reader no promotion; the read lock stays.
        $this->assertFalse($lock->acquire());
        $this->assertTrue($lock->isAcquired(), 'a refused promotion kept the read lock');
        $this->assertTrue($other->isAcquired());

        $other->release();
        $this->assertTrue($lock->acquire());
        $lock->release();
        $this->assertFalse($lock->isAcquired());
        $this->assertSame(0, redis_cmd($url, 'EXISTS', $name));
    }

    /** acquireRead(true) on a Lock holding the write lock demotes at once, even with a writer waiting. */
    public function testABlockingReadOnAWriteLockDemotesAtOnce(): void
    {
        $url = bridge_test_server()->url();
        $name = redislock_test_key('shared-demote-blocking');
        $lock = self::lock($url, $name);
        $this->assertTrue($lock->acquire());
        $started = microtime(true);
        $this->assertTrue($lock->acquireRead(true));
        $this->assertLessThan(0.5, microtime(true) - $started);
        $this->assertSame('~~read', redis_cmd($url, 'GET', $name));
        $lock->release();
        $this->assertSame(0, redis_cmd($url, 'EXISTS', $name));
    }

    /**
     * acquire(true) on a Lock holding a read lock waits as a writer (new
     * readers wait behind it) and is promoted when the other reader, in
     * another process, releases.
     */
    public function testABlockingPromotionIsWokenByTheOtherReadersRelease(): void
    {
        $url = bridge_test_server()->url();
        $name = redislock_test_key('shared-promote-blocking');
        $other = self::lock($url, $name);
        $this->assertTrue($other->acquireRead());

        $child = $this->inChild(function () use ($url, $name): array {
            $lock = self::lock($url, $name);
            $read = $lock->acquireRead();
            $lock->acquire(true);
            $at = hrtime(true);
            $owner = redis_cmd($url, 'GET', $name);
            $lock->release();
            return ['read' => $read, 'at' => $at, 'owner' => $owner];
        });
        $this->waitUntilQueued($url, $name);

        $this->assertFalse(self::lock($url, $name)->acquireRead(), 'a new reader got in beside a waiting promotion');
        $released = hrtime(true);
        $other->release();
        $report = $this->report($child);
        $this->assertTrue($report['read']);
        $this->assertIsString($report['owner']);
        $this->assertNotSame('~~read', $report['owner'], 'promoted: the key holds a writer\'s token');
        $this->assertLessThan(self::WOKEN_MS, ($report['at'] - $released) / 1e6, 'woken by the other reader\'s release');
    }

    /** A read hold has no token another process could restore: its Key refuses to be serialized. */
    public function testAKeyHoldingAReadLockCannotBeSerialized(): void
    {
        $url = bridge_test_server()->url();
        $key = new Key(redislock_test_key('shared-serialize'));
        $lock = self::factory($url)->createLockFromKey($key, 30);
        $this->assertTrue($lock->acquireRead());
        try {
            $this->expectException(UnserializableKeyException::class);
            serialize($key);
        } finally {
            $lock->release();
        }
    }

    /** A read lock is released when its Lock (and Key) go, as a write lock is. */
    public function testAReadLockIsReleasedOnDestruction(): void
    {
        $url = bridge_test_server()->url();
        $name = redislock_test_key('shared-destruct');
        $lock = self::lock($url, $name);
        $this->assertTrue($lock->acquireRead());
        unset($lock);
        $this->assertSame(0, redis_cmd($url, 'EXISTS', $name));
        $this->assertTrue(self::lock($url, $name)->acquire(), 'a writer gets in after the reader\'s Lock went');
    }

    /**
     * The extension refuses read holds with options meant for exclusive
     * holds: its LockException reaches Symfony's Lock, which wraps it in a
     * LockAcquiringException (as for any store error); nothing is taken.
     */
    public function testOptionsTheExtensionRefusesForReadHolds(): void
    {
        $url = bridge_test_server()->url();
        $name = redislock_test_key('shared-refused');
        $lock = self::factory($url, ['fencing' => true])->createLock($name, 30);
        try {
            $lock->acquireRead();
            $this->fail('a read lock was taken with fencing');
        } catch (LockAcquiringException $e) {
            $this->assertInstanceOf(\RedisLock\LockException::class, $e->getPrevious());
            $this->assertStringContainsString('fencing', $e->getPrevious()->getMessage());
        }
        $this->assertSame(0, redis_cmd($url, 'EXISTS', $name));
        $this->assertTrue($lock->acquire(), 'the write lock works with fencing');
        $lock->release();
    }

    /**
     * Runs $work in a forked child, which writes what it returns (or the
     * exception it threw) to a report file and dies by SIGKILL (no PHPUnit
     * shutdown, no destructor of the parent's objects). Returns the pid
     * and the report's path.
     *
     * @param callable(): array<string, mixed> $work
     * @return array{int, string}
     */
    private function inChild(callable $work): array
    {
        $report = tempnam(sys_get_temp_dir(), 'redislock-shared-');
        $pid = pcntl_fork();
        $this->assertNotSame(-1, $pid, 'fork failed');
        if ($pid === 0) {
            try {
                $result = $work();
            } catch (\Throwable $e) {
                $result = ['error' => $e::class . ': ' . $e->getMessage()];
            }
            file_put_contents($report, json_encode($result));
            posix_kill(posix_getpid(), SIGKILL);
        }
        $this->children[$pid] = $pid;
        return [$pid, $report];
    }

    /**
     * Waits (at most 10 s) for the child, then returns its report.
     *
     * @param array{int, string} $child
     * @return array<string, mixed>
     */
    private function report(array $child): array
    {
        [$pid, $path] = $child;
        $deadline = microtime(true) + 10;
        while (pcntl_waitpid($pid, $status, WNOHANG) === 0) {
            if (microtime(true) > $deadline) {
                posix_kill($pid, SIGKILL);
                pcntl_waitpid($pid, $status);
                break;
            }
            usleep(5000);
        }
        unset($this->children[$pid]);
        $result = json_decode((string) file_get_contents($path), true);
        unlink($path);
        $this->assertIsArray($result, 'the child reported');
        $this->assertArrayNotHasKey('error', $result, $result['error'] ?? '');
        return $result;
    }

    /** Waits (at most 5 s) until a waiter is queued on the lock (the extension's queue key). */
    private function waitUntilQueued(string $url, string $name): void
    {
        $deadline = microtime(true) + 5;
        while ((int) redis_cmd($url, 'ZCARD', "$name~~q") === 0) {
            $this->assertLessThan($deadline, microtime(true), 'the child never queued');
            usleep(2000);
        }
    }

    private static function commandsProcessed(string $url): int
    {
        preg_match('/^total_commands_processed:(\d+)/m', redis_cmd($url, 'INFO', 'stats'), $m);
        return (int) $m[1];
    }
}

<?php

namespace RedisLock\Bridge\Tests\Symfony;

use Symfony\Component\Lock\Key;

/**
 * Blocking across processes, in the shape of Symfony's
 * BlockingStoreTestTrait: a child process blocks in waitAndSave() on a
 * resource the parent holds, and is woken by the parent's release within
 * milliseconds (not a polling interval).
 */
trait BlockingStoreTestTrait
{
    public function testBlockingLocks(): void
    {
        $resource = self::resource('blocking');
        $store = $this->getStore();
        $key = new Key($resource);
        $store->save($key);
        $report = tempnam(sys_get_temp_dir(), 'redislock-blocking-');
        $pid = pcntl_fork();
        if ($pid === 0) {
            $childStore = $this->getStore();
            $childKey = new Key($resource);
            $childStore->waitAndSave($childKey);
            $at = hrtime(true);
            $held = $childStore->exists($childKey);
            $childStore->delete($childKey);
            file_put_contents($report, json_encode(['at' => $at, 'held' => $held]));
            posix_kill(posix_getpid(), SIGKILL);
        }
        $this->assertTrue(
            $this->waitFor(fn () => self::queued($resource), 5.0),
            'the child never queued'
        );
        usleep(50000);
        $this->assertTrue($store->exists($key), 'the parent still holds it while the child waits');
        $released = hrtime(true);
        $store->delete($key);
        pcntl_waitpid($pid, $status);
        $result = json_decode((string) file_get_contents($report), true);
        unlink($report);
        $this->assertIsArray($result, 'the child reported');
        $this->assertTrue($result['held']);
        $wokenMs = ($result['at'] - $released) / 1e6;
        $this->assertLessThan(200, $wokenMs, "woken {$wokenMs} ms after the release");
        $this->addToAssertionCount(1);
    }

    /** Whether a waiter is queued on the resource (the extension's queue key). */
    private static function queued(string $resource): bool
    {
        return (int) redis_cmd(bridge_test_server()->url(), 'ZCARD', "$resource~~q") > 0;
    }

    private function waitFor(callable $cond, float $seconds): bool
    {
        $deadline = microtime(true) + $seconds;
        while (!$cond()) {
            if (microtime(true) > $deadline) {
                return false;
            }
            usleep(2000);
        }
        return true;
    }
}

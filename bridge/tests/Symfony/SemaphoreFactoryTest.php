<?php

namespace RedisLock\Bridge\Tests\Symfony;

use PHPUnit\Framework\TestCase;
use RedisLock\Bridge\Symfony\RedisLockSemaphoreStore;
use Symfony\Component\Semaphore\SemaphoreFactory;

/**
 * Symfony user code, unchanged, on the semaphore store: SemaphoreFactory
 * semaphores acquire up to their limit, refresh, release, give a permit
 * back on destruction; several `php` processes (proc_open) never hold more
 * than the limit at once; a crashed process's permit comes back at its
 * lease end.
 */
final class SemaphoreFactoryTest extends TestCase
{
    private function factory(array $options = []): SemaphoreFactory
    {
        return new SemaphoreFactory(new RedisLockSemaphoreStore(bridge_test_server()->url(), $options));
    }

    public function testAcquireUpToTheLimitRefreshRelease(): void
    {
        $factory = $this->factory();
        $name = redislock_test_key('semaphore-factory');
        $first = $factory->createSemaphore($name, 2, 1, 30);
        $second = $factory->createSemaphore($name, 2, 1, 30);
        $third = $factory->createSemaphore($name, 2, 1, 30);
        $this->assertTrue($first->acquire());
        $this->assertTrue($second->acquire());
        $this->assertFalse($third->acquire(), 'a third semaphore of 2 is refused');
        $this->assertTrue($first->isAcquired());
        $this->assertEqualsWithDelta(30, $first->getRemainingLifetime(), 1);
        $first->refresh(60);
        $this->assertEqualsWithDelta(60, $first->getRemainingLifetime(), 1);
        $first->release();
        $this->assertFalse($first->isAcquired());
        $this->assertTrue($third->acquire(), 'the released permit is free again');
        $second->release();
        $third->release();
    }

    public function testAPermitIsGivenBackOnDestruction(): void
    {
        $name = redislock_test_key('semaphore-destruct');
        $semaphore = $this->factory()->createSemaphore($name, 1, 1, 30);
        $this->assertTrue($semaphore->acquire());
        unset($semaphore);
        $other = $this->factory()->createSemaphore($name, 1, 1, 30);
        $this->assertTrue($other->acquire(), 'given back when the Semaphore was destroyed');
        $other->release();
    }

    /**
     * Four `php` processes take a semaphore of 2 over and over for 1.5 s
     * (Symfony's Semaphore cannot block: they retry every 2 ms); each
     * counts the holders in Redis while it holds a permit. Never more than
     * 2 at once; 2 at once was reached.
     */
    public function testAtMostTheLimitAcrossProcesses(): void
    {
        $name = redislock_test_key('semaphore-processes');
        $counter = "$name:holding";
        $children = [];
        for ($i = 0; $i < 4; $i++) {
            $children[] = $this->startChild(<<<'PHP'
                $factory = new Symfony\Component\Semaphore\SemaphoreFactory(
                    new RedisLock\Bridge\Symfony\RedisLockSemaphoreStore($input['url']));
                $semaphore = $factory->createSemaphore($input['name'], 2, 1, 10);
                $max = 0;
                $held = 0;
                $end = microtime(true) + 1.5;
                while (microtime(true) < $end) {
                    if (!$semaphore->acquire()) {
                        usleep(2000);
                        continue;
                    }
                    $held++;
                    $max = max($max, (int) redis_cmd($input['url'], 'INCR', $input['counter']));
                    usleep(20000);
                    redis_cmd($input['url'], 'DECR', $input['counter']);
                    $semaphore->release();
                    // Work outside the semaphore: Symfony's acquire() does
                    // not wait in line, so a process that tried again at
                    // once could keep its permit from the others for the
                    // whole run on a busy machine.
                    usleep(10000);
                }
                echo json_encode(['max' => $max, 'held' => $held]);
                PHP, ['url' => bridge_test_server()->url(), 'name' => $name, 'counter' => $counter]);
        }
        $max = 0;
        $held = 0;
        foreach ($children as $child) {
            $result = $this->finishChild($child);
            $max = max($max, $result['max']);
            $held += $result['held'];
            $this->assertGreaterThan(0, $result['held'], 'every process got a permit at some point');
        }
        $this->assertSame(2, $max, 'never more than 2 holders at once, and 2 were reached');
        $this->assertGreaterThan(10, $held);
    }

    /** A process killed while it holds a permit: its permit comes back when its lease ends (+0.5 s grace). */
    public function testACrashedProcessPermitComesBackAtItsLeaseEnd(): void
    {
        $name = redislock_test_key('semaphore-crash');
        $this->finishChild($this->startChild(<<<'PHP'
            $factory = new Symfony\Component\Semaphore\SemaphoreFactory(
                new RedisLock\Bridge\Symfony\RedisLockSemaphoreStore($input['url']));
            $semaphore = $factory->createSemaphore($input['name'], 1, 1, 1.0);
            if ($semaphore->acquire()) {
                posix_kill(getmypid(), SIGKILL);
            }
            echo json_encode(['error' => 'not acquired']);
            PHP, ['url' => bridge_test_server()->url(), 'name' => $name]), true);
        $crashed = hrtime(true);
        $semaphore = $this->factory()->createSemaphore($name, 1, 1, 10);
        $this->assertFalse($semaphore->acquire(), 'the killed process still holds its permit');
        while (!$semaphore->acquire()) {
            $this->assertLessThan(3.0, (hrtime(true) - $crashed) / 1e9, 'the permit never came back');
            usleep(20_000);
        }
        $this->assertGreaterThan(1.0, (hrtime(true) - $crashed) / 1e9, 'not before the lease ended');
        $semaphore->release();
    }

    /**
     * Starts `php` with the extension, Symfony Semaphore, the bridge and
     * the phpt helpers (redis_cmd); $input is JSON-decoded into $input.
     *
     * @return array{0: resource, 1: array<int, resource>}
     */
    private function startChild(string $code, array $input): array
    {
        $file = tempnam(sys_get_temp_dir(), 'redislock-semaphore-child-');
        file_put_contents($file, "<?php\n"
            . "require '/usr/share/php/Symfony/Component/Semaphore/autoload.php';\n"
            . 'require ' . var_export(dirname(__DIR__, 2) . '/autoload.php', true) . ";\n"
            . 'require ' . var_export(dirname(__DIR__, 3) . '/php-tests/config.inc', true) . ";\n"
            . "unlink(__FILE__);\n"
            . '$input = json_decode(' . var_export(json_encode($input), true) . ", true);\n"
            . $code);
        $cmd = [PHP_BINARY, '-d', 'extension=' . redislock_extension_path(), '-d', 'display_errors=stderr', $file];
        $proc = proc_open($cmd, [0 => ['file', '/dev/null', 'r'], 1 => ['pipe', 'w'], 2 => ['pipe', 'w']], $pipes);
        $this->assertIsResource($proc, 'cannot start a php child');

        return [$proc, $pipes];
    }

    /**
     * Waits for a child and returns its JSON output (or [] when it was
     * expected to be killed).
     *
     * @param array{0: resource, 1: array<int, resource>} $child
     */
    private function finishChild(array $child, bool $killed = false): array
    {
        [$proc, $pipes] = $child;
        $out = (string) stream_get_contents($pipes[1]);
        $err = (string) stream_get_contents($pipes[2]);
        fclose($pipes[1]);
        fclose($pipes[2]);
        $exit = proc_close($proc);
        if ($killed) {
            $this->assertSame('', $out, "the child was not killed: $out $err");
            return [];
        }
        $this->assertSame(0, $exit, "child failed: $out $err");
        $result = json_decode($out, true);
        $this->assertIsArray($result, "child printed no JSON: $out $err");

        return $result;
    }
}

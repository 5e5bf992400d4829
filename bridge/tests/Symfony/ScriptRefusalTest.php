<?php

namespace RedisLock\Bridge\Tests\Symfony;

use PHPUnit\Framework\TestCase;
use RedisLock\Bridge\Symfony\RedisLockSemaphoreStore;
use RedisLock\Bridge\Symfony\RedisLockStore;
use RedisLock\LockException;
use Symfony\Component\Lock\Exception\LockAcquiringException;
use Symfony\Component\Lock\LockFactory;
use Symfony\Component\Semaphore\Exception\RuntimeException as SemaphoreRuntimeException;
use Symfony\Component\Semaphore\Exception\SemaphoreAcquiringException;
use Symfony\Component\Semaphore\Key;
use Symfony\Component\Semaphore\SemaphoreFactory;

/**
 * A server whose ACL user may not run scripts (`-@scripting`), and one
 * with EVAL/EVALSHA renamed away: the stores report the real cause (the
 * extension's LockException naming the refused command), never "someone
 * else already acquired it", and take nothing.
 */
final class ScriptRefusalTest extends TestCase
{
    /** @var list<\TestRedis> */
    private static array $servers = [];

    /** @return array<string, array{string, string}> what => [URL of a user who may not run scripts, admin URL] */
    private static function refusingServers(): array
    {
        if (self::$servers === []) {
            self::$servers[] = $acl = \TestRedis::start(['--appendonly', 'yes']);
            redis_cmd($acl->url(), 'ACL', 'SETUSER', 'noscript', 'on', '>pw', '~*', '&*', '+@all', '-@scripting');
            self::$servers[] = $renamed = \TestRedis::start(['--rename-command', 'EVAL', '', '--rename-command', 'EVALSHA', '', '--appendonly', 'yes']);
        }
        [$acl, $renamed] = self::$servers;

        return [
            'ACL without @scripting' => ["redis://noscript:pw@127.0.0.1:{$acl->port}", $acl->url()],
            'EVAL and EVALSHA renamed' => [$renamed->url(), $renamed->url()],
        ];
    }

    public static function tearDownAfterClass(): void
    {
        self::$servers = [];
    }

    private function assertNamesTheRefusedCommand(\Throwable $e, string $what): void
    {
        $this->assertSame(LockException::class, $e::class, "$what: the extension's own exception");
        $this->assertMatchesRegularExpression('/refuses (EVALSHA|EVAL|SCRIPT)\b/', $e->getMessage(), $what);
        $this->assertStringNotContainsString('not free', $e->getMessage(), $what);
    }

    /** The store's save() throws the extension's exception, not SemaphoreAcquiringException. */
    public function testTheSemaphoreStoreThrowsTheRealCause(): void
    {
        foreach (self::refusingServers() as $what => [$url, $admin]) {
            $name = redislock_test_key('refused-semaphore');
            $key = new Key($name, 2);
            try {
                (new RedisLockSemaphoreStore($url))->save($key, 10);
                $this->fail("$what: saved");
            } catch (SemaphoreAcquiringException $e) {
                $this->fail("$what: reported as taken by someone else: {$e->getMessage()}");
            } catch (LockException $e) {
                $this->assertNamesTheRefusedCommand($e, $what);
            }
            $this->assertSame(0, redis_cmd($admin, 'EXISTS', "$name~~s"), "$what: no permit taken");
        }
    }

    /**
     * Through Symfony's Semaphore: acquire() throws its RuntimeException
     * with the extension's exception as previous, where it returned false
     * ("Someone else already acquired the semaphore").
     */
    public function testSymfonysSemaphoreSurfacesTheRealCause(): void
    {
        foreach (self::refusingServers() as $what => [$url]) {
            $semaphore = (new SemaphoreFactory(new RedisLockSemaphoreStore($url)))
                ->createSemaphore(redislock_test_key('refused-factory'), 2, 1, 10);
            try {
                $acquired = $semaphore->acquire();
                $this->fail("$what: acquire() returned " . var_export($acquired, true));
            } catch (SemaphoreRuntimeException $e) {
                $this->assertNotNull($e->getPrevious(), $what);
                $this->assertNamesTheRefusedCommand($e->getPrevious(), $what);
            }
        }
    }

    /** The lock store did so already: Symfony's Lock wraps the cause in LockAcquiringException. */
    public function testSymfonysLockSurfacesTheRealCause(): void
    {
        foreach (self::refusingServers() as $what => [$url, $admin]) {
            $name = redislock_test_key('refused-lock');
            try {
                (new LockFactory(new RedisLockStore($url)))->createLock($name, 10)->acquire();
                $this->fail("$what: acquired");
            } catch (LockAcquiringException $e) {
                $this->assertNotNull($e->getPrevious(), $what);
                $this->assertNamesTheRefusedCommand($e->getPrevious(), $what);
            }
            $this->assertSame(0, redis_cmd($admin, 'EXISTS', $name), "$what: no lock taken");
        }
    }
}

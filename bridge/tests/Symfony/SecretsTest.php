<?php

namespace RedisLock\Bridge\Tests\Symfony;

use PHPUnit\Framework\TestCase;
use RedisLock\Bridge\Symfony\RedisLockSemaphoreStore;
use RedisLock\Bridge\Symfony\RedisLockStore;
use Symfony\Component\Lock\LockFactory;
use Symfony\Component\Semaphore\SemaphoreFactory;

/**
 * No Symfony bridge object shows the Redis password: the stores, the
 * factories on them, and Symfony's Lock and Semaphore holding one (held,
 * on a server that requires the password), rendered every way PHP shows
 * an object (var_dump, print_r, var_export, (array), json_encode,
 * serialize, VarDumper). var_dump() still shows the masked servers.
 */
final class SecretsTest extends TestCase
{
    use Renderings;

    private const PASSWORD = 's3cr3t-p4ss';
    private const SENTINEL_PASSWORD = 's3nt1nel-pw';

    private static ?\TestRedis $server = null;

    private static function url(): string
    {
        self::$server ??= \TestRedis::start(['--requirepass', self::PASSWORD, '--appendonly', 'yes']);

        return self::$server->url(':' . self::PASSWORD . '@');
    }

    public static function tearDownAfterClass(): void
    {
        self::$server = null;   // stops it
    }

    /** @return array<string, object> */
    private function objects(): array
    {
        $lockStore = new RedisLockStore(self::url(), ['prefix' => 'secrets:']);
        $semaphoreStore = new RedisLockSemaphoreStore(self::url());
        $lockFactory = new LockFactory($lockStore);
        $semaphoreFactory = new SemaphoreFactory($semaphoreStore);
        $lock = $lockFactory->createLock(redislock_test_key('secret-lock'), 30);
        $this->assertTrue($lock->acquire(), 'the lock was taken on the server that wants the password');
        $semaphore = $semaphoreFactory->createSemaphore(redislock_test_key('secret-semaphore'), 2, 1, 30);
        $this->assertTrue($semaphore->acquire(), 'the permit was taken on the server that wants the password');
        $sentinel = ['sentinel' => 'mymaster', 'sentinel_password' => self::SENTINEL_PASSWORD];

        return [
            'RedisLockStore' => $lockStore,
            'RedisLockSemaphoreStore' => $semaphoreStore,
            'LockFactory' => $lockFactory,
            'SemaphoreFactory' => $semaphoreFactory,
            'Lock (held)' => $lock,
            'Semaphore (held)' => $semaphore,
            'cloned RedisLockStore' => clone $lockStore,
            'RedisLockStore on Sentinels' => new RedisLockStore([self::url()], $sentinel),
            'RedisLockSemaphoreStore on Sentinels' => new RedisLockSemaphoreStore([self::url()], $sentinel),
        ];
    }

    public function testNoObjectShowsThePasswordAnyWay(): void
    {
        foreach ($this->objects() as $what => $object) {
            foreach (self::renderings($object) as $how => $text) {
                $this->assertStringNotContainsString(self::PASSWORD, $text, "$what, $how");
                $this->assertStringNotContainsString(self::SENTINEL_PASSWORD, $text, "$what, $how");
            }
        }
    }

    /** serialize() of a store is refused with a clear message, also through a LockFactory. */
    public function testSerializingAStoreIsRefusedClearly(): void
    {
        foreach ([
            'RedisLockStore' => [new RedisLockStore(self::url()), RedisLockStore::class],
            'RedisLockSemaphoreStore' => [new RedisLockSemaphoreStore(self::url()), RedisLockSemaphoreStore::class],
            'LockFactory' => [new LockFactory(new RedisLockStore(self::url())), RedisLockStore::class],
        ] as $what => [$object, $class]) {
            try {
                serialize($object);
                $this->fail("$what was serialized");
            } catch (\BadMethodCallException $e) {
                $this->assertSame("Cannot serialize $class", $e->getMessage(), $what);
            }
        }
    }

    /** var_dump() stays useful: the servers, masked by the extension. */
    public function testVarDumpShowsTheMaskedServers(): void
    {
        $port = (string) parse_url(self::url(), PHP_URL_PORT);
        foreach ([new RedisLockStore(self::url()), new RedisLockSemaphoreStore(self::url())] as $store) {
            $this->assertSame(["redis://:***@127.0.0.1:$port/0"], $store->__debugInfo()['servers']);
            ob_start();
            var_dump($store);
            $this->assertStringContainsString("redis://:***@127.0.0.1:$port/0", (string) ob_get_clean());
        }
    }

    /** A clone keeps its servers and options: it takes locks on the same server, with the same prefix. */
    public function testACloneUsesTheSameServers(): void
    {
        $store = clone new RedisLockStore(self::url(), ['prefix' => 'cloned:']);
        $name = redislock_test_key('cloned');
        $lock = (new LockFactory($store))->createLock($name, 30);
        $this->assertTrue($lock->acquire());
        $this->assertSame(1, redis_cmd(self::url(), 'EXISTS', "cloned:$name"));
        $lock->release();
    }

    /**
     * A constructor that refuses its options shows no password in the
     * exception's trace, even with zend.exception_ignore_args off
     * (`#[\SensitiveParameter]` all the way down).
     */
    public function testARefusalCarriesNoPasswordInItsTrace(): void
    {
        $ignoreArgs = ini_set('zend.exception_ignore_args', '0');
        try {
            foreach ([
                fn () => new RedisLockStore(self::url(), ['sentinel_password' => self::SENTINEL_PASSWORD, 'prefx' => 'a']),
                fn () => new RedisLockSemaphoreStore(self::url(), ['sentinel_password' => self::SENTINEL_PASSWORD, 'prefx' => 'a']),
            ] as $build) {
                try {
                    $build();
                    $this->fail('the unknown option was accepted');
                } catch (\InvalidArgumentException $e) {
                    // The bridge's frames (PHPUnit's and this test's carry the test case itself).
                    $ours = array_filter($e->getTrace(), fn (array $frame) => str_starts_with($frame['class'] ?? '', 'RedisLock\\Bridge\\')
                        && !str_starts_with($frame['class'], 'RedisLock\\Bridge\\Tests\\'));
                    $this->assertCount(2, $ours, 'the constructor and the check');
                    $shown = var_export($ours, true) . $e->getTraceAsString() . $e->getMessage();
                    $this->assertStringNotContainsString(self::PASSWORD, $shown);
                    $this->assertStringNotContainsString(self::SENTINEL_PASSWORD, $shown);
                }
            }
        } finally {
            ini_set('zend.exception_ignore_args', (string) $ignoreArgs);
        }
    }
}

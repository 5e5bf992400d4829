<?php

namespace RedisLock\Bridge\Tests\Symfony;

use PHPUnit\Framework\Attributes\DataProvider;
use PHPUnit\Framework\TestCase;
use RedisLock\Bridge\OptionNames;
use RedisLock\Bridge\Symfony\RedisLockSemaphoreStore;
use RedisLock\Bridge\Symfony\RedisLockStore;
use Symfony\Component\Lock\Exception\InvalidArgumentException as LockInvalidArgument;
use Symfony\Component\Lock\LockFactory;
use Symfony\Component\Semaphore\Exception\InvalidArgumentException as SemaphoreInvalidArgument;

/**
 * Both stores refuse an unknown option name when they are built (not at
 * the first acquire), with the component's InvalidArgumentException
 * naming the option and the nearest valid name; the names are the
 * extension's own.
 */
final class OptionValidationTest extends TestCase
{
    private static function url(): string
    {
        return bridge_test_server()->url();
    }

    public function testTheLockStoreRefusesAnUnknownOptionWhenBuilt(): void
    {
        try {
            new RedisLockStore(self::url(), ['prefx' => 'app:']);
            $this->fail('the lock store was built with "prefx"');
        } catch (LockInvalidArgument $e) {
            $this->assertStringStartsWith('RedisLockStore: unknown option "prefx" (did you mean "prefix"?). Valid options: prefix, ', $e->getMessage());
        }
    }

    public function testTheSemaphoreStoreRefusesAnUnknownOptionWhenBuilt(): void
    {
        try {
            new RedisLockSemaphoreStore(self::url(), ['auto_relase' => false]);
            $this->fail('the semaphore store was built with "auto_relase"');
        } catch (SemaphoreInvalidArgument $e) {
            $this->assertStringStartsWith('RedisLockSemaphoreStore: unknown option "auto_relase" (did you mean "auto_release"?)', $e->getMessage());
        }
    }

    /** A list instead of a map is a list of unknown options ("0"), not silently nothing. */
    public function testAListOfOptionsIsRefused(): void
    {
        $this->expectException(LockInvalidArgument::class);
        $this->expectExceptionMessage('unknown option "0"');
        new RedisLockStore(self::url(), ['auto_renew']);
    }

    /** The lock store refuses `owner` itself: it never suggests it. */
    public function testTheLockStoreDoesNotSuggestOwner(): void
    {
        try {
            new RedisLockStore(self::url(), ['ownr' => 'x']);
            $this->fail('the lock store was built with "ownr"');
        } catch (LockInvalidArgument $e) {
            $this->assertStringContainsString('unknown option "ownr"', $e->getMessage());
            $this->assertStringNotContainsString('"owner"', $e->getMessage());
        }
    }

    /** @return array<string, array{string, string}> */
    public static function typos(): array
    {
        return [
            'swap' => ['retry_dealy', 'retry_delay'],
            'missing underscore' => ['autorenew', 'auto_renew'],
            'upper case' => ['TLS_VERIFY', 'tls_verify'],
            'missing letter' => ['conect_timeout', 'connect_timeout'],
            'camel case' => ['readTimeout', 'read_timeout'],
            'sentinel' => ['sentinel_pasword', 'sentinel_password'],
        ];
    }

    /**
     * The annotation is PHPUnit 9's (Debian 12); PHPUnit 10+ reads the attribute.
     *
     * @dataProvider typos
     */
    #[DataProvider('typos')]
    public function testTheNearestNameIsSuggested(string $typo, string $meant): void
    {
        foreach ([
            fn () => new RedisLockStore(self::url(), [$typo => 1]),
            fn () => new RedisLockSemaphoreStore(self::url(), [$typo => 1]),
        ] as $build) {
            try {
                $build();
                $this->fail("built with \"$typo\"");
            } catch (\InvalidArgumentException $e) {
                $this->assertStringContainsString("unknown option \"$typo\" (did you mean \"$meant\"?)", $e->getMessage());
            }
        }
    }

    /** The names the stores accept are the extension's, which are the README's. */
    public function testTheNamesAreTheExtensions(): void
    {
        try {
            new \RedisLock('k', 1.0, self::url(), ['nope' => 1]);
            $this->fail('the extension took an unknown option');
        } catch (\ValueError $e) {
            preg_match('/\(known: ([a-z_, ]+)\)/', $e->getMessage(), $m);
            $this->assertSame(explode(', ', $m[1] ?? ''), OptionNames::all());
        }
        $this->assertSame(OptionNames::FALLBACK, OptionNames::all(), 'the README\'s list is the extension\'s');
    }

    /** Every valid option builds a store whose locks work. */
    public function testValidOptionsAreAccepted(): void
    {
        $options = ['prefix' => 'valid:', 'auto_release' => true, 'retry_delay' => 0.2, 'connect_timeout' => 1.0,
            'read_timeout' => 2.0, 'drift_factor' => 0.01, 'reentrant' => true];
        $name = redislock_test_key('valid-options');
        $lock = (new LockFactory(new RedisLockStore(self::url(), $options)))->createLock($name, 30);
        $this->assertTrue($lock->acquire());
        $this->assertSame(1, redis_cmd(self::url(), 'EXISTS', "valid:$name"));
        $lock->release();
        $store = new RedisLockSemaphoreStore(self::url(), $options);
        $this->assertFalse($store->exists(new \Symfony\Component\Semaphore\Key($name, 1)));
    }
}

<?php

namespace RedisLock\Bridge\Tests\Symfony\Bundle;

use Symfony\Component\Config\Definition\Exception\InvalidConfigurationException;
use Symfony\Component\DependencyInjection\Exception\EnvNotFoundException;
use Symfony\Component\Lock\LockFactory;

/**
 * `redislock:` configuration errors are refused when the container is
 * built (the kernel's boot, as `cache:clear` would), each with a message
 * that names the key, and shows no password; a configuration read from
 * the environment builds, and is checked when the services are.
 */
final class BundleConfigTest extends BundleTestCase
{
    private const PASSWORD = 's3cr3t-p4ss';

    private static function url(): string
    {
        return bridge_test_server()->url();
    }

    /** @param array<string, mixed> $config */
    private function refusal(array $config): InvalidConfigurationException
    {
        try {
            $this->kernel($config)->boot();
        } catch (InvalidConfigurationException $e) {
            $this->assertStringNotContainsString(self::PASSWORD, $e->getMessage());
            $this->assertStringNotContainsString(self::PASSWORD, (string) $e);

            return $e;
        }
        $this->fail('the kernel booted with ' . json_encode(array_keys($config)));
    }

    public function testAnUnknownOptionIsRefusedWithTheNearestName(): void
    {
        $e = $this->refusal(['servers' => self::url(), 'options' => ['prefx' => 'app:']]);
        $this->assertSame('Unrecognized option "prefx" under "redislock.options". Did you mean "prefix"?', $e->getMessage());
    }

    public function testAnUnknownKeyIsRefusedWithTheNearestName(): void
    {
        $e = $this->refusal(['server' => self::url()]);
        $this->assertSame('Unrecognized option "server" under "redislock". Did you mean "servers"?', $e->getMessage());
        $e = $this->refusal(['lock' => ['initial_tll' => 10]]);
        $this->assertSame('Unrecognized option "initial_tll" under "redislock.lock". Did you mean "initial_ttl"?', $e->getMessage());
    }

    /** `owner` and `reentrant` are the stores' own: not options of the bundle. */
    public function testTheStoresOwnOptionsAreRefused(): void
    {
        foreach (['owner' => 'me', 'reentrant' => true] as $name => $value) {
            $e = $this->refusal(['options' => [$name => $value]]);
            $this->assertStringStartsWith("Unrecognized option \"$name\" under \"redislock.options\"", $e->getMessage());
        }
    }

    /** A value the extension refuses fails the build, with the extension's message naming the option. */
    public function testABadValueIsRefused(): void
    {
        $e = $this->refusal(['servers' => self::url(), 'options' => ['auto_release' => 'maybe']]);
        $this->assertStringStartsWith('Invalid configuration for path "redislock": ', $e->getMessage());
        $this->assertStringContainsString('option "auto_release" must be', $e->getMessage());
        $e = $this->refusal(['servers' => self::url(), 'options' => ['retry_delay' => -1]]);
        $this->assertStringContainsString('option "retry_delay"', $e->getMessage());
    }

    /** Options valid alone but not together (the extension's rules). */
    public function testAnImpossibleCombinationIsRefused(): void
    {
        $e = $this->refusal(['servers' => self::url(), 'options' => ['sentinel_password' => self::PASSWORD]]);
        $this->assertStringContainsString('sentinel_password without sentinel', $e->getMessage());
    }

    /** Malformed servers fail the build; the message shows no password. */
    public function testMalformedServersAreRefused(): void
    {
        $e = $this->refusal(['servers' => 'redis://:' . self::PASSWORD . '@127.0.0.1:notaport']);
        $this->assertStringContainsString('$servers', $e->getMessage());
        $e = $this->refusal(['servers' => ['redis://127.0.0.1:1', 6379]]);
        $this->assertSame('Invalid configuration for path "redislock.servers": Expected a URL string or a list of URL strings.', $e->getMessage());
        $e = $this->refusal(['servers' => []]);
        $this->assertStringContainsString('Expected a URL string or a list of URL strings.', $e->getMessage());
    }

    public function testANonPositiveInitialTtlIsRefused(): void
    {
        $e = $this->refusal(['servers' => self::url(), 'lock' => ['initial_ttl' => 0]]);
        $this->assertStringContainsString('strictly positive TTL', $e->getMessage());
    }

    /**
     * Servers from the environment are known only at run time: the
     * container builds without the variable (as `cache:warmup` on a
     * build machine), and the services read it when they are built.
     */
    public function testServersFromTheEnvironmentAreReadAtRunTime(): void
    {
        $variable = 'REDISLOCK_BUNDLE_TEST_URL_' . getmypid();
        $c = $this->boot(['servers' => "%env($variable)%"]);
        try {
            $c->get(LockFactory::class);
            $this->fail('the factory was built without its servers');
        } catch (EnvNotFoundException $e) {
            $this->assertStringContainsString($variable, $e->getMessage());
        }

        $_SERVER[$variable] = self::url();
        try {
            $c = $this->boot(['servers' => "%env($variable)%", 'options' => ['prefix' => 'env:']]);
            $name = redislock_test_key('bundle-env');
            $lock = $c->get(LockFactory::class)->createLock($name, 30);
            $this->assertTrue($lock->acquire());
            $this->assertSame(1, redis_cmd(self::url(), 'EXISTS', "env:$name"));
            $lock->release();
        } finally {
            unset($_SERVER[$variable]);
        }
    }
}

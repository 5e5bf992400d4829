<?php

namespace RedisLock\Bridge\Tests\Symfony\Bundle;

use RedisLock\Bridge\Tests\Symfony\Renderings;

/**
 * The bundle's services show no Redis password, every way PHP shows an
 * object (var_dump, print_r, var_export, (array), json_encode, serialize,
 * VarDumper): the stores, the factories, and a held Lock and Semaphore
 * made by them. With `servers: '%env(...)%'` the password is in none of
 * the files of the compiled container either.
 */
final class BundleSecretsTest extends BundleTestCase
{
    use Renderings;

    private const PASSWORD = 's3cr3t-p4ss';

    private static ?\TestRedis $server = null;

    private static function url(): string
    {
        self::$server ??= \TestRedis::start(['--requirepass', self::PASSWORD, '--appendonly', 'yes']);

        return self::$server->url(':' . self::PASSWORD . '@');
    }

    public static function tearDownAfterClass(): void
    {
        self::$server = null;
    }

    public function testTheServicesShowNoPassword(): void
    {
        $c = $this->boot(['servers' => self::url(), 'options' => ['prefix' => 'bundle-secrets:']]);
        $lock = $c->get('lock.factory')->createLock(redislock_test_key('bundle-secret'), 30);
        $this->assertTrue($lock->acquire(), 'the lock was taken on the server that wants the password');
        $semaphore = $c->get('semaphore.factory')->createSemaphore(redislock_test_key('bundle-secret'), 2, 1, 30);
        $this->assertTrue($semaphore->acquire(), 'the permit was taken on the server that wants the password');
        $objects = [
            'redislock.lock.store' => $c->get('redislock.lock.store'),
            'redislock.lock.factory' => $c->get('redislock.lock.factory'),
            'redislock.semaphore.store' => $c->get('redislock.semaphore.store'),
            'redislock.semaphore.factory' => $c->get('redislock.semaphore.factory'),
            'Lock (held)' => $lock,
            'Semaphore (held)' => $semaphore,
            'Autowired' => $c->get(Autowired::class),
        ];
        foreach ($objects as $what => $object) {
            foreach (self::renderings($object) as $how => $text) {
                $this->assertStringNotContainsString(self::PASSWORD, $text, "$what, $how");
            }
        }
        $lock->release();
        $semaphore->release();
    }

    /** With the URL in the environment, the compiled container holds no password. */
    public function testTheCompiledContainerHoldsNoPasswordFromTheEnvironment(): void
    {
        $variable = 'REDISLOCK_BUNDLE_SECRET_URL_' . getmypid();
        $_SERVER[$variable] = self::url();
        try {
            $c = $this->boot(['servers' => "%env($variable)%"]);
            $lock = $c->get('lock.factory')->createLock(redislock_test_key('bundle-env-secret'), 30);
            $this->assertTrue($lock->acquire());
            $lock->release();
        } finally {
            unset($_SERVER[$variable]);
        }
        $files = new \RecursiveIteratorIterator(new \RecursiveDirectoryIterator($this->lastDir(), \FilesystemIterator::SKIP_DOTS));
        $seen = 0;
        foreach ($files as $file) {
            $this->assertStringNotContainsString(self::PASSWORD, (string) file_get_contents((string) $file), (string) $file);
            $seen++;
        }
        $this->assertGreaterThan(3, $seen, 'the container was compiled into files');
    }
}

<?php

namespace RedisLock\Bridge\Tests\Symfony\Bundle;

use PHPUnit\Framework\TestCase;
use Symfony\Component\DependencyInjection\ContainerInterface;

// Debian's FrameworkBundle (php-symfony-framework-bundle) and what it
// loads: DependencyInjection, Config, HttpKernel, Cache, ...
require_once '/usr/share/php/Symfony/Bundle/FrameworkBundle/autoload.php';
// Symfony 6.4's FrameworkBundle asks Composer 2's runtime which packages
// are installed (ContainerBuilder::willBeAvailable); Debian's packages
// come without Composer's autoloader, so its InstalledVersions (Debian's
// composer package) is loaded by hand: with no data it says "available"
// for every class that exists.
if (!class_exists(\Composer\InstalledVersions::class) && is_file('/usr/share/php/Composer/InstalledVersions.php')) {
    require_once '/usr/share/php/Composer/InstalledVersions.php';
}

/**
 * Boots TestKernels (FrameworkBundle + the redislock bundle) in
 * directories of their own, and removes them after the test.
 */
abstract class BundleTestCase extends TestCase
{
    /** @var list<TestKernel> */
    private array $kernels = [];

    /** @var list<string> */
    private array $dirs = [];

    /** The ids of the bundle and the aliases it sets, public in the test kernels. */
    protected const IDS = [
        'redislock.lock.store', 'redislock.lock.factory', 'redislock.semaphore.store', 'redislock.semaphore.factory',
        'lock.factory', 'semaphore.factory',
        \Symfony\Component\Lock\LockFactory::class, \Symfony\Component\Semaphore\SemaphoreFactory::class,
        \RedisLock\Bridge\Symfony\RedisLockStore::class, \RedisLock\Bridge\Symfony\RedisLockSemaphoreStore::class,
        'services_resetter', 'logger',
    ];

    /**
     * A kernel with this `redislock:` configuration, not booted yet.
     *
     * @param array<string, mixed> $redislock
     * @param array<string, mixed> $framework
     * @param \Closure|null        $services  see TestKernel: no bundle, these services instead
     * @param class-string|null    $logger    the class of the `logger` service; null: a NullLogger
     */
    protected function kernel(array $redislock, array $framework = [], ?\Closure $services = null, ?string $logger = null): TestKernel
    {
        $dir = sys_get_temp_dir() . '/redislock-bundle-' . getmypid() . '-' . bin2hex(random_bytes(4));
        mkdir($dir);
        $this->dirs[] = $dir;

        return $this->kernels[] = new TestKernel($dir, $redislock, $framework, self::IDS, $services, $logger ?? \Psr\Log\NullLogger::class);
    }

    /**
     * The container of a booted kernel with this configuration.
     *
     * @param array<string, mixed> $redislock
     * @param array<string, mixed> $framework
     * @param \Closure|null        $services  see TestKernel: no bundle, these services instead
     */
    protected function boot(array $redislock, array $framework = [], ?\Closure $services = null): ContainerInterface
    {
        $kernel = $this->kernel($redislock, $framework, $services);
        $kernel->boot();

        return $kernel->getContainer();
    }

    /** The directory the last kernel was built in. */
    protected function lastDir(): string
    {
        return $this->dirs[array_key_last($this->dirs)];
    }

    protected function tearDown(): void
    {
        foreach ($this->kernels as $kernel) {
            $kernel->shutdown();
        }
        $this->kernels = [];
        foreach ($this->dirs as $dir) {
            self::remove($dir);
        }
        $this->dirs = [];
    }

    private static function remove(string $path): void
    {
        if (is_dir($path) && !is_link($path)) {
            foreach (scandir($path) as $entry) {
                if ($entry !== '.' && $entry !== '..') {
                    self::remove("$path/$entry");
                }
            }
            rmdir($path);
        } elseif (file_exists($path) || is_link($path)) {
            unlink($path);
        }
    }
}

<?php

namespace RedisLock\Bridge\Tests\Laravel;

use Illuminate\Cache\CacheManager;
use Illuminate\Config\Repository as Config;
use Illuminate\Container\Container;
use Illuminate\Filesystem\Filesystem;
use Illuminate\Foundation\PackageManifest;
use PHPUnit\Framework\TestCase;
use RedisLock\Bridge\Laravel\RedisLockStore;

require_once '/usr/share/php/Illuminate/Filesystem/autoload.php';
require_once '/usr/share/php/Illuminate/Foundation/PackageManifest.php';

/**
 * Package discovery: Laravel's own PackageManifest, reading a
 * vendor/composer/installed.json made from bridge/composer.json (as
 * `composer require` writes it), lists RedisLockServiceProvider, and the
 * provider it lists registers the `redislock` driver in an application.
 */
class DiscoveryTest extends TestCase
{
    private string $dir;

    /** A temporary application root with vendor/composer/installed.json and bootstrap/cache. */
    protected function setUp(): void
    {
        parent::setUp();
        $this->dir = sys_get_temp_dir() . '/redislock-discovery-' . bin2hex(random_bytes(4));
        mkdir($this->dir . '/vendor/composer', 0777, true);
        mkdir($this->dir . '/bootstrap/cache', 0777, true);
        $package = json_decode((string) file_get_contents(dirname(__DIR__, 2) . '/composer.json'), true);
        $this->assertIsArray($package);
        $package += ['version' => 'dev-main', 'version_normalized' => 'dev-main', 'install-path' => '../redislock/bridge'];
        file_put_contents($this->dir . '/vendor/composer/installed.json', json_encode(['packages' => [$package], 'dev' => false]));
    }

    /** Removes the temporary root. */
    protected function tearDown(): void
    {
        (new Filesystem())->deleteDirectory($this->dir);
        parent::tearDown();
    }

    public function testLaravelsPackageManifestDiscoversTheProvider(): void
    {
        $manifest = new PackageManifest(new Filesystem(), $this->dir, $this->dir . '/bootstrap/cache/packages.php');
        $providers = $manifest->providers();
        $this->assertSame(['RedisLock\\Bridge\\Laravel\\RedisLockServiceProvider'], $providers);
        $this->assertFileExists($this->dir . '/bootstrap/cache/packages.php', 'Laravel wrote its manifest');

        $app = new Container();
        $app->instance('config', new Config(['cache' => ['stores' => ['locks' => ['driver' => 'redislock', 'servers' => 'redis://127.0.0.1:1']]]]));
        $app->singleton('cache', fn ($app) => new CacheManager($app));
        foreach ($providers as $class) {
            (new $class($app))->register();
        }
        $this->assertInstanceOf(RedisLockStore::class, $app['cache']->store('locks')->getStore());
    }

    /** An application's `dont-discover` leaves it out, as for any package. */
    public function testDontDiscoverLeavesItOut(): void
    {
        file_put_contents($this->dir . '/composer.json', json_encode(['extra' => ['laravel' => ['dont-discover' => ['redislock/bridge']]]]));
        $manifest = new PackageManifest(new Filesystem(), $this->dir, $this->dir . '/bootstrap/cache/packages.php');
        $this->assertSame([], $manifest->providers());
    }
}

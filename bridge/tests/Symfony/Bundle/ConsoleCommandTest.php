<?php

namespace RedisLock\Bridge\Tests\Symfony\Bundle;

use Symfony\Bundle\FrameworkBundle\Console\Application;
use Symfony\Component\Console\Tester\CommandTester;

/**
 * `bin/console redislock:inspect|release|watch|metrics|doctor` in a real kernel:
 * the bundle registers them on its configured servers and prefix.
 */
final class ConsoleCommandTest extends BundleTestCase
{
    public function testInspectReleaseAndWatchOnTheConfiguredServers(): void
    {
        $url = bridge_test_server()->url();
        $kernel = $this->kernel(['servers' => $url, 'options' => ['prefix' => 'console:']]);
        $app = new Application($kernel);
        $app->setAutoExit(false);
        $name = redislock_test_key('console');
        $held = new \RedisLock($name, 30.0, $url, ['prefix' => 'console:', 'owner' => 'web-3']);
        $this->assertTrue($held->acquire());

        $inspect = new CommandTester($app->find('redislock:inspect'));
        $this->assertSame(0, $inspect->execute(['name' => $name]));
        $this->assertStringContainsString("lock \"$name\": held for writing", $inspect->getDisplay());
        $this->assertStringContainsString('owners:  web-3', $inspect->getDisplay(), 'the prefix of the configuration');

        $this->assertSame(0, $inspect->execute(['name' => $name, '--json' => true]));
        $this->assertSame(['web-3'], json_decode($inspect->getDisplay(), true, 512, JSON_THROW_ON_ERROR)['owners']);

        $watch = new CommandTester($app->find('redislock:watch'));
        $this->assertSame(0, $watch->execute(['name' => $name, '--interval' => '0.01', '--count' => '2']));
        $this->assertCount(2, explode("\n", trim($watch->getDisplay())));

        $release = new CommandTester($app->find('redislock:release'));
        $this->assertSame(2, $release->execute(['name' => $name]), 'without --force');
        $this->assertTrue(\RedisLock::inspect($name, $url, ['prefix' => 'console:'])['held']);
        $this->assertSame(0, $release->execute(['name' => $name, '--force' => true]));
        $this->assertFalse(\RedisLock::inspect($name, $url, ['prefix' => 'console:'])['held']);
        $this->assertFalse($held->isAcquired());

        $doctor = new CommandTester($app->find('redislock:doctor'));
        $this->assertSame(0, $doctor->execute([]), $doctor->getDisplay());
        $this->assertStringContainsString('verdict: SAFE', $doctor->getDisplay());
    }

    public function testMetricsPrintsAndDrawsAnExposition(): void
    {
        $app = new Application($this->kernel(['servers' => bridge_test_server()->url()]));
        $fixture = dirname(__DIR__, 2) . '/Console/fixtures/metrics.txt';
        $metrics = new CommandTester($app->find('redislock:metrics'));
        $this->assertSame(0, $metrics->execute(['--file' => $fixture]));
        $this->assertSame(file_get_contents($fixture), $metrics->getDisplay());
        $this->assertSame(0, $metrics->execute(['--file' => $fixture, '--svg' => null]));
        $this->assertStringStartsWith('<svg xmlns="http://www.w3.org/2000/svg"', $metrics->getDisplay());
        $this->assertSame(36, substr_count($metrics->getDisplay(), '<rect class="bar"'));
        $this->assertSame(2, $metrics->execute(['--file' => $fixture, '--url' => 'http://127.0.0.1/metrics']));
    }
}

<?php

namespace RedisLock\Bridge\Tests\Laravel;

use Illuminate\Console\Application as Artisan;
use Illuminate\Events\Dispatcher;
use Symfony\Component\Console\Input\ArrayInput;
use Symfony\Component\Console\Output\BufferedOutput;

require_once '/usr/share/php/Illuminate/Console/autoload.php';

/**
 * `php artisan redislock:inspect|release|watch|metrics|doctor`: the provider
 * adds them to Artisan, on the application's redislock store (the default
 * store here: its servers and key prefix).
 */
class ArtisanCommandTest extends LaravelTestCase
{
    /** Runs one artisan command line; returns [status, output]. */
    private function artisan(array $input): array
    {
        $artisan = new Artisan($this->app, new Dispatcher($this->app), 'test');
        $artisan->setAutoExit(false);
        $out = new BufferedOutput();
        $status = $artisan->run(new ArrayInput($input), $out);
        return [$status, $out->fetch()];
    }

    protected function tearDown(): void
    {
        Artisan::forgetBootstrappers();
        parent::tearDown();
    }

    public function testTheProviderAddsTheCommandsOnTheDefaultStore(): void
    {
        $lock = $this->app->make('cache')->store()->lock('report', 30, 'worker-9');
        $this->assertTrue($lock->get());

        [$status, $out] = $this->artisan(['command' => 'redislock:inspect', 'name' => 'report']);
        $this->assertSame(0, $status, $out);
        $this->assertStringContainsString('lock "report": held for writing', $out);
        $this->assertStringContainsString('owners:  worker-9', $out);

        [$status, $out] = $this->artisan(['command' => 'redislock:release', 'name' => 'report', '--force' => true]);
        $this->assertSame(0, $status, $out);
        $this->assertStringContainsString('released "report"', $out);
        $this->assertFalse(\RedisLock::inspect($this->prefix . 'report', bridge_test_server()->url())['held']);
    }

    /** `redislock:doctor` checks the default store's server (the test server: an append-only file, no maxmemory). */
    public function testDoctorChecksTheStoresServer(): void
    {
        [$status, $out] = $this->artisan(['command' => 'redislock:doctor']);
        $this->assertSame(0, $status, $out);
        $this->assertStringContainsString(sprintf('127.0.0.1:%d/0  SAFE', bridge_test_server()->port), $out);
        $this->assertStringContainsString('verdict: SAFE', $out);
        [$status, $out] = $this->artisan(['command' => 'redislock:doctor', 'name' => 'report', '--json' => true]);
        $this->assertSame(0, $status, $out);
        $this->assertSame('safe', json_decode($out, true, 512, JSON_THROW_ON_ERROR)[0]['verdict']);
    }

    public function testMetricsPrintsAndDrawsAnExposition(): void
    {
        $fixture = dirname(__DIR__) . '/Console/fixtures/metrics.txt';
        [$status, $out] = $this->artisan(['command' => 'redislock:metrics', '--file' => $fixture]);
        $this->assertSame(0, $status, $out);
        $this->assertSame(file_get_contents($fixture), $out);

        [$status, $out] = $this->artisan(['command' => 'redislock:metrics', '--file' => $fixture, '--svg' => null]);
        $this->assertSame(0, $status, $out);
        $this->assertStringStartsWith('<svg xmlns="http://www.w3.org/2000/svg"', $out);
        $this->assertSame(36, substr_count($out, '<rect class="bar"'));
    }
}

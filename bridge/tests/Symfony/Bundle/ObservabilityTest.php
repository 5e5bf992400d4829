<?php

declare(strict_types=1);

namespace RedisLock\Bridge\Tests\Symfony\Bundle;

use RedisLock\Bridge\Metrics;
use RedisLock\Bridge\Symfony\MetricsController;
use RedisLock\Bridge\Tests\MemoryLogger;
use Symfony\Component\Config\Definition\Exception\InvalidConfigurationException;
use Symfony\Component\HttpFoundation\Request;
use Symfony\Component\HttpFoundation\Response;

/**
 * The bundle's observability in a real kernel: both stores log through
 * the application's `logger` service (an in-memory one here),
 * `options.log_wait_over` is checked like every option, and with
 * `metrics: true` a route of the application (config/routes.php, the
 * route of the docs) answers `RedisLock::metrics()` through the kernel.
 */
final class ObservabilityTest extends BundleTestCase
{
    private static function url(): string
    {
        return bridge_test_server()->url();
    }

    public function testBothStoresLogThroughTheLoggerService(): void
    {
        $c = $this->kernel(['servers' => self::url(), 'options' => ['log_wait_over' => 0.2]], [], null, MemoryLogger::class);
        $c->boot();
        $c = $c->getContainer();
        $logger = $c->get('logger');
        $this->assertInstanceOf(MemoryLogger::class, $logger);

        $name = redislock_test_key('bundle-log');
        $lock = $c->get('lock.factory')->createLock($name, 30);
        $this->assertTrue($lock->acquire());
        redis_cmd(self::url(), 'DEL', $name);
        $lock->release();
        $semaphore = $c->get('semaphore.factory')->createSemaphore($name, 1, 1, 0.2);
        $this->assertTrue($semaphore->acquire());
        usleep(300_000);
        $semaphore->release();

        $this->assertSame(['lost_lease', 'long_hold'], array_column(array_column($logger->records, 'context'), 'event'), $logger->dump());
        $this->assertSame(['lock', 'permit'], array_column(array_column($logger->records, 'context'), 'primitive'));
    }

    public function testLogWaitOverIsCheckedWhenTheContainerIsBuilt(): void
    {
        try {
            $this->kernel(['servers' => self::url(), 'options' => ['log_wait_ovr' => 1]])->boot();
            $this->fail('built with a typo');
        } catch (InvalidConfigurationException $e) {
            $this->assertSame('Unrecognized option "log_wait_ovr" under "redislock.options". Did you mean "log_wait_over"?', $e->getMessage());
        }
        try {
            $this->kernel(['servers' => self::url(), 'options' => ['log_wait_over' => 'later']])->boot();
            $this->fail('built with a threshold that is no number');
        } catch (InvalidConfigurationException $e) {
            $this->assertStringContainsString('option "log_wait_over" must be a number of seconds', $e->getMessage());
        }
        $c = $this->boot(['servers' => self::url(), 'options' => ['log_wait_over' => null, 'prefix' => 'obs:']]);
        $lock = $c->get('lock.factory')->createLock(redislock_test_key('bundle-log-null'), 30);
        $this->assertTrue($lock->acquire(), 'the option never reaches the extension');
        $lock->release();
    }

    public function testNoMetricsControllerUnlessEnabled(): void
    {
        $c = $this->boot(['servers' => self::url()]);
        $this->assertFalse($c->has(MetricsController::class));
        $this->assertFalse($c->has('redislock.metrics.controller'));
    }

    /** The kernel's answer to GET /redislock/metrics, with `metrics: true` and the docs' route. */
    private function get(): Response
    {
        $kernel = $this->kernel(['servers' => self::url(), 'metrics' => true], [
            'router' => ['resource' => __DIR__ . '/config/routes.php', 'type' => 'php', 'utf8' => true],
        ]);
        $kernel->boot();
        $this->assertInstanceOf(MetricsController::class, $kernel->getContainer()->get(MetricsController::class));
        $this->assertSame($kernel->getContainer()->get(MetricsController::class), $kernel->getContainer()->get('redislock.metrics.controller'));

        return $kernel->handle(Request::create('/redislock/metrics'));
    }

    public function testTheRouteServesTheExposition(): void
    {
        $this->assertTrue(Metrics::available(), 'the loaded extension has RedisLock::metrics()');
        $lock = new \RedisLock(redislock_test_key('bundle-metrics'), 30.0, self::url());
        $this->assertTrue($lock->acquire());
        $lock->release();
        $response = $this->get();
        $this->assertSame(200, $response->getStatusCode(), (string) $response->getContent());
        $this->assertSame('text/plain; version=0.0.4; charset=utf-8', $response->headers->get('Content-Type'));
        $this->assertStringContainsString('no-store', (string) $response->headers->get('Cache-Control'));
        $this->assertStringContainsString("# TYPE redislock_acquires_total counter\n", (string) $response->getContent());
        $this->assertMatchesRegularExpression('/^redislock_acquires_total\{primitive="lock",result="acquired"\} [1-9]\d*$/m', (string) $response->getContent());
    }

}

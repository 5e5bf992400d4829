<?php

declare(strict_types=1);

namespace RedisLock\Bridge\Tests\Laravel;

use Illuminate\Events\Dispatcher;
use Illuminate\Http\Request;
use Illuminate\Routing\Router;
use RedisLock\Bridge\Laravel\MetricsController;
use RedisLock\Bridge\Laravel\RedisLockServiceProvider;
use RedisLock\Bridge\Metrics;
use RedisLock\Bridge\Tests\Laravel\Fixtures\RequireMetricsToken;
use Symfony\Component\HttpFoundation\Response;

require_once '/usr/share/php/Illuminate/Routing/autoload.php';
require_once '/usr/share/php/Illuminate/Http/autoload.php';

/**
 * The provider's metrics route, through Laravel's own Router: absent
 * unless `redislock.metrics.route` is set; then GET of that path answers
 * `RedisLock::metrics()` as `text/plain; version=0.0.4` (a 501 saying why
 * with an extension that has no metrics), behind the configured
 * middleware.
 */
final class MetricsRouteTest extends LaravelTestCase
{
    /** Binds a router, sets the redislock.metrics config, boots the provider again. */
    private function router(array $metrics): Router
    {
        $router = new Router(new Dispatcher($this->app), $this->app);
        $this->app->instance('router', $router);
        $this->app['config']->set('redislock.metrics', $metrics);
        (new RedisLockServiceProvider($this->app))->boot();

        return $router;
    }

    private static function get(Router $router, array $headers = []): Response
    {
        $request = Request::create('/redislock/metrics');
        foreach ($headers as $name => $value) {
            $request->headers->set($name, $value);
        }

        return $router->dispatch($request);
    }

    public function testNoRouteUnlessAPathIsSet(): void
    {
        $this->assertCount(0, $this->router([])->getRoutes());
        $this->assertCount(0, $this->router(['route' => null, 'middleware' => ['auth']])->getRoutes());
    }

    public function testTheRouteIsAGetOfThePathNamedRedislockMetrics(): void
    {
        $routes = $this->router(['route' => '/redislock/metrics'])->getRoutes();
        $routes->refreshNameLookups();  // as Laravel's RouteServiceProvider does once the app is booted
        $route = $routes->getByName('redislock.metrics');
        $this->assertNotNull($route);
        $this->assertSame('redislock/metrics', $route->uri());
        $this->assertSame(['GET', 'HEAD'], $route->methods());
        $this->assertStringStartsWith(MetricsController::class, $route->getActionName());
    }

    public function testTheRouteServesTheExposition(): void
    {
        $this->assertTrue(Metrics::available(), 'the loaded extension has RedisLock::metrics()');
        $this->assertTrue($this->app->make('cache')->store()->lock('metered', 10)->get(fn () => true));
        $response = self::get($this->router(['route' => '/redislock/metrics']));
        $this->assertSame(200, $response->getStatusCode(), (string) $response->getContent());
        $this->assertSame('text/plain; version=0.0.4; charset=utf-8', $response->headers->get('Content-Type'));
        $this->assertStringContainsString("# TYPE redislock_wait_seconds histogram\n", (string) $response->getContent());
        $this->assertMatchesRegularExpression('/^redislock_acquires_total\{primitive="lock",result="acquired"\} [1-9]\d*$/m', (string) $response->getContent());
    }


    public function testTheMiddlewareGuardsTheRoute(): void
    {
        $router = $this->router(['route' => '/redislock/metrics', 'middleware' => [RequireMetricsToken::class]]);
        $this->assertSame(403, self::get($router)->getStatusCode());
        $response = self::get($router, ['X-Metrics-Token' => 'letmein']);
        $this->assertSame(200, $response->getStatusCode(), (string) $response->getContent());
    }

    public function testAMalformedConfigurationIsRefusedAtBoot(): void
    {
        foreach ([
            [['route' => ['/x']], 'redislock.metrics.route must be a path'],
            [['route' => '/x', 'middleware' => [['auth']]], 'redislock.metrics.middleware must be a list'],
        ] as [$metrics, $message]) {
            try {
                $this->router($metrics);
                $this->fail('booted with ' . json_encode($metrics));
            } catch (\InvalidArgumentException $e) {
                $this->assertStringStartsWith($message, $e->getMessage());
            }
        }
    }
}

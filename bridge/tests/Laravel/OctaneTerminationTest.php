<?php

namespace RedisLock\Bridge\Tests\Laravel;

use Illuminate\Events\Dispatcher;
use Illuminate\Support\Facades\Cache;
use RedisLock\Bridge\Laravel\RedisLockServiceProvider;

/**
 * The provider ends the request scope at Octane's termination events.
 * Octane is not installed: these tests declare stand-in classes with the
 * exact names of Octane's events (Fixtures/OctaneEvents.php) and dispatch
 * objects of them through Laravel's own events dispatcher. They prove the
 * provider's wiring and its effect, not Octane's dispatching of the events.
 */
class OctaneTerminationTest extends LaravelTestCase
{
    /** Binds Laravel's events dispatcher, declares the stand-ins, boots the provider again. */
    private function bootWithOctaneStandIns(): Dispatcher
    {
        require_once __DIR__ . '/Fixtures/OctaneEvents.php';
        $this->app->singleton('events', fn ($app) => new Dispatcher($app));
        (new RedisLockServiceProvider($this->app))->boot();

        return $this->app->make('events');
    }

    /** Without Octane's classes (a fresh process) the provider registers no listener. */
    public function testWithoutOctaneNoListenerIsRegistered(): void
    {
        $result = $this->runChild(<<<'PHP'
            require '/usr/share/php/Illuminate/Container/autoload.php';
            require '/usr/share/php/Illuminate/Events/autoload.php';
            $app = new Illuminate\Container\Container();
            $app->singleton('events', fn ($app) => new Illuminate\Events\Dispatcher($app));
            $provider = new RedisLock\Bridge\Laravel\RedisLockServiceProvider($app);
            $provider->register();
            $provider->boot();
            $listening = [];
            foreach (RedisLock\Bridge\Laravel\RedisLockServiceProvider::OCTANE_TERMINATION_EVENTS as $event) {
                $listening[$event] = $app['events']->hasListeners($event);
            }
            echo json_encode(['octane' => class_exists('Laravel\Octane\Events\RequestTerminated'), 'listening' => $listening]);
            PHP, []);
        $this->assertFalse($result['octane']);
        $this->assertSame([false, false, false], array_values($result['listening']));
    }

    /**
     * Each of RequestTerminated, TaskTerminated and TickTerminated (stand-in
     * classes of those names) releases a hold a "request" forgot.
     */
    public function testEachOctaneTerminationEventWithStandInClassesEndsTheRequestScope(): void
    {
        $events = $this->bootWithOctaneStandIns();
        foreach (RedisLockServiceProvider::OCTANE_TERMINATION_EVENTS as $event) {
            $this->assertTrue($events->hasListeners($event), $event);
            $name = $this->prefix . 'forgotten-' . substr(strrchr($event, '\\'), 1);
            $lock = new \RedisLock($name, 30.0, $this->url());
            $this->assertTrue($lock->acquire());

            $events->dispatch(new $event());

            $this->assertSame(0, $this->redis('EXISTS', $name), "released at $event");
            $this->assertFalse($lock->isAcquired());
        }
    }

    /**
     * A `$seconds = 0` cache lock whose object is gone keeps being renewed
     * in a long-running worker until the request scope ends; after
     * RequestTerminated (a stand-in class of that name) it frees within
     * one lease, as after a PHP-FPM request. Laravel locks with a ttl stay
     * (they outlive the request by Laravel's semantics).
     */
    public function testAForgottenNoExpiryLockFreesAfterRequestTerminatedWithAStandInClass(): void
    {
        $events = $this->bootWithOctaneStandIns();
        $store = Cache::store('locks_short_renew');
        $this->assertTrue($store->lock('daemon')->get());
        $this->assertTrue($store->lock('job', 30)->get());

        usleep((int) (3 * self::SHORT_RENEW_TTL * 1e6));
        $this->assertTrue($store->lock('daemon')->isLocked(), 'renewed while the worker lives on');

        $events->dispatch(new \Laravel\Octane\Events\RequestTerminated());
        $ended = hrtime(true);
        while ($store->lock('daemon')->isLocked()) {
            $this->assertLessThan(self::SHORT_RENEW_TTL + 0.3, self::since($ended), 'still renewed after RequestTerminated');
            usleep(10_000);
        }
        $this->assertTrue($store->lock('job')->isLocked(), 'a lock with a ttl stays until released');
        $store->lock('job')->forceRelease();
    }
}

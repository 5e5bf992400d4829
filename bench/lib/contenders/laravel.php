<?php

declare(strict_types=1);

require_once __DIR__ . '/../LaravelLockContender.php';

use Illuminate\Cache\RedisStore;
use Illuminate\Contracts\Cache\Lock;
use Illuminate\Redis\RedisManager;

/**
 * Laravel's cache lock without an application: a RedisManager with the
 * phpredis driver (the app is only used for events, which stay off), the
 * cache RedisStore, and one store->lock() per hold. get() tries once;
 * block($seconds) is the framework's blocking loop (usleep 250 ms, its
 * default). Release is EVAL of the compare-and-delete script.
 */
final class LaravelContender extends LaravelLockContender
{
    private RedisStore $store;

    public function __construct(private readonly Endpoint $endpoint)
    {
    }

    public function prepare(): void
    {
        $manager = new RedisManager(null, 'phpredis', [
            'default' => ['host' => $this->endpoint->host, 'port' => $this->endpoint->port, 'database' => 0],
        ]);
        $this->store = new RedisStore($manager, '', 'default');
        $this->store->lockConnection()->ping(); // connects now
    }

    protected function newLock(string $key): Lock
    {
        return $this->store->lock($key, LOCK_TTL);
    }
}

return fn (Endpoint $redis) => new LaravelContender($redis);

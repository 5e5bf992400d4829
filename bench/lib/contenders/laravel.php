<?php

declare(strict_types=1);

require_once '/usr/share/php/Illuminate/autoload.php';

use Illuminate\Cache\RedisStore;
use Illuminate\Contracts\Cache\LockTimeoutException;
use Illuminate\Redis\RedisManager;

/**
 * Laravel's cache lock without an application: a RedisManager with the
 * phpredis driver (the app is only used for events, which stay off), the
 * cache RedisStore, and one store->lock() per hold. get() tries once;
 * block($seconds) is the framework's blocking loop (usleep 250 ms, its
 * default). Release is EVAL of the compare-and-delete script.
 */
final class LaravelContender implements Contender
{
    private RedisStore $store;
    private ?Illuminate\Contracts\Cache\Lock $lock = null;

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

    public function tryAcquire(string $key): bool
    {
        $this->lock = $this->store->lock($key, LOCK_TTL);
        return (bool) $this->lock->get();
    }

    public function acquireBlocking(string $key, float $wait): bool
    {
        $this->lock = $this->store->lock($key, LOCK_TTL);
        try {
            return (bool) $this->lock->block((int) ceil($wait));
        } catch (LockTimeoutException) {
            return false;
        }
    }

    public function release(): bool
    {
        $ok = (bool) $this->lock->release();
        $this->lock = null;
        return $ok;
    }
}

return fn (Endpoint $redis) => new LaravelContender($redis);

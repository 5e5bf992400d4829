<?php

declare(strict_types=1);

require_once __DIR__ . '/../LaravelPrimitives.php';

use Illuminate\Redis\RedisManager;
use Illuminate\Support\Facades\Redis;

/**
 * Laravel's own funnel: `Redis::funnel($name)->limit(4)->block(10)->then(...)`
 * (the Redis facade on a RedisManager with the phpredis driver, bound as
 * `redis` in a bare container). Laravel's ConcurrencyLimiter tries one EVAL
 * (MGET of the N slot keys, SET EX of a free one) and sleeps 250 ms between
 * tries, its default; release is an EVAL of compare-and-delete.
 */
final class LaravelOwnPrimitives extends LaravelPrimitives
{
    public function __construct(private readonly Endpoint $endpoint)
    {
    }

    public function prepare(string $workload): void
    {
        $app = self::container();
        $app->instance('redis', new RedisManager($app, 'phpredis', [
            'default' => ['host' => $this->endpoint->host, 'port' => $this->endpoint->port, 'database' => 0],
        ]));
        parent::prepare($workload);
    }

    protected function funnel(string $name): object
    {
        return Redis::funnel($name);
    }
}

return ['make' => fn (Endpoint $redis) => new LaravelOwnPrimitives($redis)];

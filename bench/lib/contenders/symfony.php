<?php

declare(strict_types=1);

require_once __DIR__ . '/../SymfonyLockContender.php';

use Symfony\Component\Lock\PersistingStoreInterface;
use Symfony\Component\Lock\Store\RedisStore;

/**
 * Symfony Lock: RedisStore on a phpredis client. acquire(true) blocks with
 * Symfony's own loop (usleep 100 +- 10 ms).
 */
final class SymfonyContender extends SymfonyLockContender
{
    public function __construct(private readonly Endpoint $endpoint)
    {
    }

    protected function store(): PersistingStoreInterface
    {
        $redis = new Redis();
        $redis->connect($this->endpoint->host, $this->endpoint->port);
        return new RedisStore($redis);
    }
}

return fn (Endpoint $redis) => new SymfonyContender($redis);

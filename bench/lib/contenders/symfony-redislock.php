<?php

declare(strict_types=1);

require_once __DIR__ . '/../SymfonyLockContender.php';
require_once __DIR__ . '/../../../bridge/autoload.php';

use RedisLock\Bridge\Symfony\RedisLockStore;
use Symfony\Component\Lock\PersistingStoreInterface;

/**
 * Symfony Lock with the same code as `symfony`, only the store differs: the
 * bridge's RedisLockStore on the extension. acquire(true) goes to the
 * store's waitAndSave(), which waits in the extension and is woken by the
 * holder's release (no 100 ms polling).
 */
final class SymfonyRedislockContender extends SymfonyLockContender
{
    public function __construct(private readonly Endpoint $endpoint)
    {
    }

    protected function store(): PersistingStoreInterface
    {
        if (!extension_loaded('redislock')) {
            throw new RuntimeException('the redislock extension is not loaded (php -d extension=.../redislock.so)');
        }
        return new RedisLockStore($this->endpoint->url());
    }
}

return fn (Endpoint $redis) => new SymfonyRedislockContender($redis);

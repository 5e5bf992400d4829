<?php

declare(strict_types=1);

/**
 * The extension under test: a fresh RedisLock per hold, acquire() to try
 * once, acquire($wait) to block with the extension's own waiting.
 * $servers and $options are RedisLock's own (one URL here; a list of URLs
 * or a cluster seed in the topology suite, redislock-topology.php).
 */
final class RedislockContender implements Contender
{
    private ?RedisLock $lock = null;

    public function __construct(private readonly string|array $servers, private readonly array $options = [])
    {
    }

    public function prepare(): void
    {
        if (!extension_loaded('redislock')) {
            throw new RuntimeException('the redislock extension is not loaded (php -d extension=.../redislock.so)');
        }
        // Opens the pooled connection and loads the release script.
        $lock = new RedisLock('bench:prepare:' . getmypid(), LOCK_TTL, $this->servers, $this->options);
        $lock->acquire();
        $lock->release();
    }

    public function tryAcquire(string $key): bool
    {
        $this->lock = new RedisLock($key, LOCK_TTL, $this->servers, $this->options);
        return $this->lock->acquire();
    }

    public function acquireBlocking(string $key, float $wait): bool
    {
        $this->lock = new RedisLock($key, LOCK_TTL, $this->servers, $this->options);
        return $this->lock->acquire($wait);
    }

    public function release(): bool
    {
        $ok = $this->lock->release();
        $this->lock = null;
        return $ok;
    }
}

return fn (Endpoint $redis) => new RedislockContender($redis->url());

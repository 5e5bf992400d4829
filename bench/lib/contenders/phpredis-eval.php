<?php

declare(strict_types=1);

/**
 * The blog recipe with phpredis: SET key token NX PX ttl, and EVAL of the
 * full compare-and-delete script on every release. Blocks with SET NX +
 * usleep(10 ms).
 */
final class PhpredisEvalContender implements Contender
{
    use PollingWait;

    private Redis $redis;
    private string $key = '';
    private string $token = '';

    public function __construct(private readonly Endpoint $endpoint)
    {
    }

    public function prepare(): void
    {
        $this->redis = new Redis();
        $this->redis->connect($this->endpoint->host, $this->endpoint->port);
    }

    public function tryAcquire(string $key): bool
    {
        $token = bin2hex(random_bytes(16));
        if ($this->redis->set($key, $token, ['NX', 'PX' => LOCK_TTL * 1000]) !== true) {
            return false;
        }
        $this->key = $key;
        $this->token = $token;
        return true;
    }

    public function release(): bool
    {
        return $this->redis->eval(RELEASE_LUA, [$this->key, $this->token], 1) === 1;
    }
}

return fn (Endpoint $redis) => new PhpredisEvalContender($redis);

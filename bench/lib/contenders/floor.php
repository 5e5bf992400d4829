<?php

declare(strict_types=1);

/**
 * The round-trip floor: the same two commands as the recipes (a SET with a
 * fresh token, then an EVALSHA) but no lock semantics: SET without NX and a
 * script that only returns 1. Nothing with two round trips per cycle can
 * be faster from PHP with phpredis.
 */
final class FloorContender implements Contender
{
    private Redis $redis;
    private string $sha = '';
    private string $key = '';
    private string $token = '';

    public function __construct(private readonly Endpoint $endpoint)
    {
    }

    public function prepare(): void
    {
        $this->redis = new Redis();
        $this->redis->connect($this->endpoint->host, $this->endpoint->port);
        $this->sha = $this->redis->script('load', 'return 1');
    }

    public function tryAcquire(string $key): bool
    {
        $this->key = $key;
        $this->token = bin2hex(random_bytes(16));
        return $this->redis->set($key, $this->token, ['PX' => LOCK_TTL * 1000]) === true;
    }

    public function acquireBlocking(string $key, float $wait): bool
    {
        return $this->tryAcquire($key);
    }

    public function release(): bool
    {
        return $this->redis->evalSha($this->sha, [$this->key, $this->token], 1) === 1;
    }
}

return fn (Endpoint $redis) => new FloorContender($redis);

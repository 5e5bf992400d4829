<?php

declare(strict_types=1);

/**
 * The blog recipe with the release script loaded once (SCRIPT LOAD in
 * prepare) and run with EVALSHA. Blocks with SET NX + usleep(10 ms).
 */
final class PhpredisEvalshaContender implements Contender
{
    use PollingWait;

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
        $this->sha = $this->redis->script('load', RELEASE_LUA);
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
        return $this->redis->evalSha($this->sha, [$this->key, $this->token], 1) === 1;
    }
}

return fn (Endpoint $redis) => new PhpredisEvalshaContender($redis);

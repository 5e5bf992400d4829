<?php

declare(strict_types=1);

require_once '/usr/share/php/Predis/autoload.php';

/**
 * Predis' own way to run a script: a ScriptCommand sends EVALSHA and falls
 * back to EVAL on NOSCRIPT (Predis\Client::onErrorResponse).
 */
final class PredisReleaseLock extends Predis\Command\ScriptCommand
{
    public function getScript()
    {
        return RELEASE_LUA;
    }

    protected function getKeysCount()
    {
        return 1;
    }
}

/** Predis: SET NX PX + EVALSHA/EVAL release. Blocks with SET NX + usleep(10 ms). */
final class PredisContender implements Contender
{
    use PollingWait;

    private Predis\Client $client;
    private string $key = '';
    private string $token = '';

    public function __construct(private readonly Endpoint $endpoint)
    {
    }

    public function prepare(): void
    {
        $this->client = new Predis\Client(['scheme' => 'tcp', 'host' => $this->endpoint->host, 'port' => $this->endpoint->port]);
        $this->client->getProfile()->defineCommand('lockrelease', PredisReleaseLock::class);
        $this->client->connect();
        $this->client->script('load', RELEASE_LUA);
    }

    public function tryAcquire(string $key): bool
    {
        $token = bin2hex(random_bytes(16));
        if ($this->client->set($key, $token, 'PX', LOCK_TTL * 1000, 'NX') === null) {
            return false;
        }
        $this->key = $key;
        $this->token = $token;
        return true;
    }

    public function release(): bool
    {
        return (int) $this->client->lockrelease($this->key, $this->token) === 1;
    }
}

return fn (Endpoint $redis) => new PredisContender($redis);

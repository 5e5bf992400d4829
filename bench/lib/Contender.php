<?php

declare(strict_types=1);

/**
 * What every benchmarked lock looks like to the harness.
 *
 * One instance per PHP process (it owns that process's Redis connection).
 * Each hold is a fresh lock object or a fresh token, as the library's
 * normal per-request use would make it.
 */
interface Contender
{
    /** Connects and loads scripts: everything that must not be measured. */
    public function prepare(): void;

    /** One attempt, no waiting. */
    public function tryAcquire(string $key): bool;

    /** Waits with the library's own blocking mechanism, for at most $wait seconds. */
    public function acquireBlocking(string $key, float $wait): bool;

    /** Releases the current hold; true when it was ours and is now free. */
    public function release(): bool;
}

/** The canonical compare-and-delete release script (redis.io SET page). */
const RELEASE_LUA = 'if redis.call("get",KEYS[1]) == ARGV[1] then return redis.call("del",KEYS[1]) else return 0 end';

/** Lock lease used by every contender, in seconds (Laravel takes whole seconds). */
const LOCK_TTL = 10;

/** The private redis-server the benchmark runs against. */
final class Endpoint
{
    public function __construct(public readonly string $host, public readonly int $port)
    {
    }

    public function url(): string
    {
        return "redis://{$this->host}:{$this->port}";
    }
}

/**
 * Blocking the way the blog recipes do it: SET NX, and on failure usleep(10 ms)
 * and try again until the deadline.
 */
trait PollingWait
{
    public function acquireBlocking(string $key, float $wait): bool
    {
        $deadline = hrtime(true) + (int) ($wait * 1e9);
        while (!$this->tryAcquire($key)) {
            if (hrtime(true) >= $deadline) {
                return false;
            }
            usleep(10000);
        }
        return true;
    }
}

/**
 * The blog recipe with phpredis: SET key token NX PX ttl with a fresh token,
 * a compare-and-delete script to release, and the recipes' SET NX +
 * usleep(10 ms) loop to wait. Subclasses choose how the script is sent.
 */
abstract class PhpredisRecipe implements Contender
{
    use PollingWait;

    protected Redis $redis;
    protected string $key = '';
    protected string $token = '';

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
}

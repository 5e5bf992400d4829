<?php

namespace RedisLock\Bridge\Symfony;

use Psr\Log\LoggerAwareInterface;
use Psr\Log\LoggerInterface;
use RedisLock\Bridge\Hold;
use RedisLock\Bridge\LockLog;
use RedisLock\Bridge\OptionNames;
use RedisLock\LockException;
use RedisLock\Semaphore;
use Symfony\Component\Semaphore\Exception\InvalidArgumentException;
use Symfony\Component\Semaphore\Exception\SemaphoreAcquiringException;
use Symfony\Component\Semaphore\Exception\SemaphoreExpiredException;
use Symfony\Component\Semaphore\Key;
use Symfony\Component\Semaphore\PersistingStoreInterface;

/**
 * A Symfony Semaphore store on the redislock extension's
 * `RedisLock\Semaphore`:
 * `new SemaphoreFactory(new RedisLockSemaphoreStore('redis://127.0.0.1:6379'))`
 * works unchanged.
 *
 * Each saved Key gets one `RedisLock\Semaphore` (the resource is the
 * semaphore's name, the Key's limit its permits, its weight the permits it
 * takes at once, the ttl of save() their lease), kept in the Key's state.
 * A permit whose holder crashed comes back when its lease ends (plus the
 * extension's 0.5 s clock grace). Symfony's own store tests
 * (`AbstractStoreTest`, 5.4) pass unchanged (`bash scripts/bridge-tests.sh`).
 *
 * - Weights: a Key's weight is taken at once, first come, first served
 *   (a Key asking more than is free holds the ones behind it); at most
 *   1,000 permits at once.
 * - Limits: every user of a resource must pass the same limit. A Key whose
 *   limit disagrees with the one in Redis is not saved
 *   (SemaphoreAcquiringException with the extension's message, so
 *   Semaphore::acquire() returns false, as for a full semaphore).
 * - Failures are not "full": a server that refuses scripts, an ACL that
 *   refuses a command, a lost connection reach the caller as the
 *   extension's exception (Symfony's Semaphore::acquire() wraps it in its
 *   RuntimeException, the extension's message in getPrevious()).
 * - The Key holds the permit's object, not a token: a Key cannot be
 *   serialized while it holds a permit (the extension refuses to serialize
 *   its objects), and a permit is given back when its Key is destroyed,
 *   also without release() (the extension's `auto_release`; create the
 *   store with `['auto_release' => false]` to leave it to its lease, as
 *   Symfony's `autoRelease: false` expects).
 * - The layout in Redis is the extension's (`name~~s`, ...), not Symfony's
 *   RedisStore sorted sets: use one kind of store per resource.
 * - reset() (`kernel.reset`, between the requests of a long-running
 *   worker) ends the request scope: see {@see reset()}. The store is a
 *   Symfony ResetInterface when symfony/service-contracts is installed.
 * - Logs: with a PSR-3 logger (setLogger(); the bundle passes the
 *   `semaphore` monolog channel), a delete() or putOffExpiration() that
 *   finds a permit of this store lost or past its ttl is logged
 *   ({@see LockLog}). save() never waits, so `log_wait_over` (accepted,
 *   as for the lock store) has nothing to measure here.
 */
final class RedisLockSemaphoreStore implements PersistingStoreInterface, ResettableInterface, LoggerAwareInterface
{
    /** The extension's shortest lease (1 ms): a shorter ttl is rounded up to it. */
    private const SHORTEST_LEASE = 0.001;

    /**
     * The Keys holding a permit this store handed out, to give them back
     * at reset().
     *
     * @var \WeakMap<Key, Semaphore>
     */
    private \WeakMap $saved;

    /** The servers and options, out of every dump's reach. */
    private readonly StoreConfig $config;

    /** Where lost permits and long holds are logged. */
    private readonly LockLog $log;

    /**
     * The permits this store took, while a logger watches them.
     *
     * @var \WeakMap<Key, Hold>
     */
    private \WeakMap $holds;

    /**
     * An unknown option name is refused here, with the nearest valid one,
     * not at the first save(). Values and servers are the extension's to
     * check, when a Key is first saved (its ValueError); the bundle checks
     * them when the container is built.
     *
     * @param string|array|null $servers one URL, or a list for Sentinel or Cluster; null: ini redislock.servers
     * @param array             $options the extension's options for RedisLock\Semaphore (prefix, cluster,
     *                                   sentinel, timeouts, TLS, auto_release, ...), and the bridge's
     *                                   `log_wait_over`
     *
     * @throws InvalidArgumentException on an unknown option (naming the nearest valid one), or a
     *                                  `log_wait_over` that is not null or a number of seconds
     */
    public function __construct(
        #[\SensitiveParameter] string|array|null $servers = null,
        #[\SensitiveParameter] array $options = [],
    ) {
        OptionNames::refuseUnknown('RedisLockSemaphoreStore', InvalidArgumentException::class, $options);
        $this->log = new LockLog(null, LockLog::waitOver($options, InvalidArgumentException::class, 'RedisLockSemaphoreStore'));
        $this->config = new StoreConfig($servers, OptionNames::withoutBridge($options));
        $this->saved = new \WeakMap();
        $this->holds = new \WeakMap();
    }

    /**
     * Logs through $logger: lost permits and permits held longer than
     * their ttl ({@see LockLog}). The bundle passes the `semaphore`
     * monolog channel.
     */
    public function setLogger(LoggerInterface $logger): void
    {
        $this->log->setLogger($logger);
    }

    /**
     * What var_dump() and print_r() show: servers and options with
     * passwords masked by the extension's own rules.
     *
     * @return array<string, mixed>
     */
    public function __debugInfo(): array
    {
        return $this->config->__debugInfo();
    }

    /**
     * Refused, as Symfony refuses to serialize a Semaphore: the store
     * carries its servers' credentials.
     *
     * @throws \BadMethodCallException always
     */
    public function __serialize(): array
    {
        throw new \BadMethodCallException('Cannot serialize ' . self::class);
    }

    /**
     * Refused, as serialize() is.
     *
     * @throws \BadMethodCallException always
     */
    public function __unserialize(array $data): void
    {
        throw new \BadMethodCallException('Cannot unserialize ' . self::class);
    }

    /**
     * Takes a permit for the Key with a lease of $ttlInSecond, or extends
     * the lease when the Key holds one already.
     *
     * @throws SemaphoreAcquiringException when not enough permits are free, or the limit disagrees with Redis
     * @throws InvalidArgumentException    on a ttl that is not positive or a weight above 1,000
     * @throws LockException               when Redis refuses the scripts (no script, ACL), is unreachable, ...
     */
    public function save(Key $key, float $ttlInSecond): void
    {
        $this->checkTtl($ttlInSecond);
        if ($key->getWeight() > 1000) {
            throw new InvalidArgumentException(sprintf(
                'The semaphore "%s" has a weight of %d: the redislock extension takes at most 1000 permits at once.',
                $key,
                $key->getWeight(),
            ));
        }

        $ttlInSecond = max($ttlInSecond, self::SHORTEST_LEASE);
        $held = $this->semaphoreOf($key);
        if ($held !== null) {
            $hold = $this->holds[$key] ?? null;
            $wasHeld = $hold !== null && LockLog::holdsHere($held);
            $refreshed = $held->refresh($ttlInSecond);
            $this->log->ended((string) $key, 'refresh', $hold, $wasHeld, $refreshed);
            if ($refreshed) {
                $hold?->extended($ttlInSecond);

                return;
            }
        }

        $semaphore = new Semaphore((string) $key, $key->getLimit(), $ttlInSecond, $this->config->servers(), $this->config->options());
        try {
            $acquired = $semaphore->acquire(0.0, $key->getWeight());
            $this->log->unsafeServers();
        } catch (LockException $e) {
            if (!self::isLimitMismatch($e)) {
                // A server that refuses scripts, an ACL refusal, a lost
                // connection: not "someone else has it". Symfony's
                // Semaphore::acquire() wraps it in its RuntimeException
                // (the extension's exception as previous).
                throw $e;
            }
            throw new SemaphoreAcquiringException($key, $e->getMessage());
        }
        if (!$acquired) {
            throw new SemaphoreAcquiringException($key, sprintf('%d of its %d permits are not free', $key->getWeight(), $key->getLimit()));
        }
        $key->setState(self::class, $semaphore);
        $this->saved[$key] = $semaphore;
        $hold = $this->log->hold('permit', $ttlInSecond);
        if ($hold !== null) {
            $this->holds[$key] = $hold;
        } else {
            unset($this->holds[$key]);
        }
    }

    /**
     * Sets the lease of the Key's permits to $ttlInSecond from now.
     *
     * @throws SemaphoreExpiredException when the Key holds no permit any more, with the reason
     *                                   Symfony's RedisStore gives ("the script returns a positive
     *                                   number"), which Symfony's store tests match
     */
    public function putOffExpiration(Key $key, float $ttlInSecond): void
    {
        $this->checkTtl($ttlInSecond);
        $semaphore = $this->semaphoreOf($key);
        $hold = $this->holds[$key] ?? null;
        $wasHeld = $hold !== null && $semaphore !== null && LockLog::holdsHere($semaphore);
        $refreshed = $semaphore !== null && $semaphore->refresh(max($ttlInSecond, self::SHORTEST_LEASE));
        $this->log->ended((string) $key, 'refresh', $hold, $wasHeld, $refreshed);
        if (!$refreshed) {
            throw new SemaphoreExpiredException($key, 'the script returns a positive number');
        }
        $hold?->extended($ttlInSecond);
    }

    /** Gives the Key's permit back (only if it is still its own). */
    public function delete(Key $key): void
    {
        $semaphore = $this->semaphoreOf($key);
        if ($semaphore !== null) {
            $hold = $this->holds[$key] ?? null;
            $wasHeld = $hold !== null && LockLog::holdsHere($semaphore);
            $this->log->ended((string) $key, 'release', $hold, $wasHeld, $semaphore->release());
        }
        $key->removeState(self::class);
        unset($this->saved[$key], $this->holds[$key]);
    }

    /** Whether the Key's permit is still its own in Redis. */
    public function exists(Key $key): bool
    {
        return $this->semaphoreOf($key)?->isAcquired() ?? false;
    }

    /**
     * Ends the request scope, as the end of a PHP-FPM request does (Symfony
     * calls it through `kernel.reset` between the requests of a
     * long-running worker and between messages of a Messenger worker):
     * ends the request scope with `RedisLock::releaseAll()`, which gives
     * back every permit this store handed out that is still held (unless
     * the store was created with `['auto_release' => false]`) and the
     * process's other locks and permits of the request (see
     * RedisLockStore::reset(): it is process-wide).
     */
    public function reset(): void
    {
        $this->saved = new \WeakMap();
        $this->holds = new \WeakMap();
        \RedisLock::releaseAll();
    }

    /**
     * Whether the extension refused the Key because its limit disagrees
     * with the semaphore's in Redis (a plain LockException, like a refused
     * script: only its message tells them apart).
     */
    private static function isLimitMismatch(LockException $e): bool
    {
        return $e::class === LockException::class
            && preg_match('/ has \d+ permits in Redis, but this object was built with \d+/', $e->getMessage()) === 1;
    }

    private function checkTtl(float $ttlInSecond): void
    {
        if (!($ttlInSecond > 0)) {
            throw new InvalidArgumentException(sprintf('The TTL should be greater than 0, "%s" given.', $ttlInSecond));
        }
    }

    /** The Key's semaphore object when the Key was saved, else null. */
    private function semaphoreOf(Key $key): ?Semaphore
    {
        if (!$key->hasState(self::class)) {
            return null;
        }
        $semaphore = $key->getState(self::class);

        return $semaphore instanceof Semaphore ? $semaphore : null;
    }
}

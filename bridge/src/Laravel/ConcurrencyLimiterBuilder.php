<?php

namespace RedisLock\Bridge\Laravel;

use RedisLock\Bridge\Hold;
use RedisLock\Bridge\LockLog;
use RedisLock\Bridge\Masked;
use RedisLock\Bridge\Sealed;
use RedisLock\Semaphore;

use Illuminate\Contracts\Redis\LimiterTimeoutException;
use Illuminate\Support\InteractsWithTime;

/**
 * A funnel on the redislock extension's `RedisLock\Semaphore`, built like
 * Laravel's `Redis::funnel()` (`Illuminate\Redis\Limiters\ConcurrencyLimiterBuilder`):
 *
 *     Cache::store('locks')->funnel('imports')
 *         ->limit(4)->block(10)->releaseAfter(120)
 *         ->then(fn () => $this->import(), fn ($e) => $this->release(30));
 *
 * At most `limit` callbacks run at once under one name, in every process.
 * Differences from Laravel's funnel:
 * - a waiter is woken when a slot is given back, in arrival order (no
 *   polling: no 250 ms sleeps, and sleep() has no effect);
 * - `releaseAfter` is the lease of the slot: a slot whose callback runs
 *   longer is given to the next waiter then (as in Laravel), and the slot
 *   of a crashed job comes back when its lease ends (plus 0.5 s allowed
 *   clock difference); a job whose PHP process ends normally gives it back
 *   at once;
 * - the keys (`prefix . name . "~~s"`, ...) share one hash slot, so it
 *   works on Redis Cluster as is;
 * - every user of a name must pass the same limit (a LockException says
 *   so otherwise).
 *
 * With a logger (the store's), a wait for a slot longer than the store's
 * `log_wait_over`, and a slot found lost or past its `releaseAfter` lease
 * when it is given back, are logged ({@see LockLog}, primitive `permit`).
 *
 * The servers and options are kept out of the object's properties (no
 * password in var_export() or an (array) cast); var_dump(), print_r() and
 * json_encode() show them masked; serialize() is refused.
 */
class ConcurrencyLimiterBuilder implements \JsonSerializable
{
    use InteractsWithTime;
    use KeepsSecrets;

    /** The funnel's name (its Redis keys start with the store's prefix and this). */
    public $name;

    /** How many callbacks may run at once. */
    public $maxLocks;

    /** The lease of a slot, in seconds. */
    public $releaseAfter = 60;

    /** How long then() waits for a slot, in seconds. */
    public $timeout = 3;

    /** The servers and RedisLock\Semaphore options (they may carry a password). */
    private Sealed $sealed;

    /** Where long waits and lost slots are logged (the store's). */
    private LockLog $log;

    /**
     * @param  string  $name  the funnel's name
     * @param  string|array<int, string>|null  $servers  as for `new RedisLock\Semaphore()`
     * @param  array<string, mixed>  $options  RedisLock\Semaphore options (prefix, cluster, sentinel, ...)
     * @param  LockLog|null  $log  where to log long waits and lost slots; null: nowhere
     */
    public function __construct(
        $name,
        #[\SensitiveParameter] string|array|null $servers = null,
        #[\SensitiveParameter] array $options = [],
        ?LockLog $log = null,
    ) {
        $this->name = (string) $name;
        $this->sealed = new Sealed(['servers' => $servers, 'options' => $options]);
        $this->log = $log ?? new LockLog();
    }

    /**
     * Sets how many callbacks may run at once.
     *
     * @param  int  $maxLocks
     * @return $this
     */
    public function limit($maxLocks)
    {
        $this->maxLocks = $maxLocks;

        return $this;
    }

    /**
     * Sets the lease of a slot.
     *
     * @param  \DateTimeInterface|\DateInterval|int  $releaseAfter
     * @return $this
     */
    public function releaseAfter($releaseAfter)
    {
        $this->releaseAfter = $this->secondsUntil($releaseAfter);

        return $this;
    }

    /**
     * Sets how long then() waits for a slot (0: one try).
     *
     * @param  int|float  $timeout
     * @return $this
     */
    public function block($timeout)
    {
        $this->timeout = $timeout;

        return $this;
    }

    /**
     * No effect: waiters are woken when a slot is given back, they do not
     * poll (Laravel 9+'s funnel sleeps this many ms between attempts).
     *
     * @param  int  $sleep
     * @return $this
     */
    public function sleep($sleep)
    {
        return $this;
    }

    /**
     * Runs $callback in a slot, waiting up to the block() time for one, and
     * gives the slot back when it returns or throws.
     *
     * @param  callable  $callback  runs in the slot; its value is returned
     * @param  callable|null  $failure  called with the LimiterTimeoutException when no slot came in time
     * @return mixed
     *
     * @throws LimiterTimeoutException when no slot came in time and there is no $failure
     * @throws \InvalidArgumentException when no limit was set
     * @throws \RedisLock\ConnectionException when Redis cannot be used
     */
    public function then(callable $callback, ?callable $failure = null)
    {
        if (!is_numeric($this->maxLocks) || (int) $this->maxLocks < 1) {
            throw new \InvalidArgumentException(sprintf('The funnel [%s] needs a limit of at least 1: call limit($n).', $this->name));
        }
        $semaphore = new Semaphore(
            $this->name, (int) $this->maxLocks, (float) $this->releaseAfter, $this->sealed->get('servers'), $this->sealed->get('options')
        );

        try {
            $wait = max(0.0, (float) $this->timeout);
            $start = hrtime(true);
            $acquired = CoroutineWait::acquire(fn (float $w) => $semaphore->acquire($w), $wait);
            $this->log->waited('permit', $this->name, Hold::since($start), $wait, $acquired, (float) $this->releaseAfter);
            $this->log->unsafeServers();
            if (!$acquired) {
                throw new LimiterTimeoutException(sprintf(
                    'No slot of the funnel [%s] was free within %s seconds.', $this->name, $this->timeout
                ));
            }
            $hold = $this->log->hold('permit', (float) $this->releaseAfter);
            try {
                return $callback();
            } finally {
                $held = $hold !== null && LockLog::holdsHere($semaphore);
                $this->log->ended($this->name, 'release', $hold, $held, $semaphore->release());
            }
        } catch (LimiterTimeoutException $e) {
            // As Laravel's then(): also for a timeout thrown by the callback (a nested funnel).
            if ($failure) {
                return $failure($e);
            }

            throw $e;
        }
    }

    /**
     * What var_dump() shows: name, limit, lease, wait, servers and options
     * with passwords masked by the extension's own rules.
     *
     * @return array<string, mixed>
     */
    public function __debugInfo(): array
    {
        return [
            'name' => $this->name,
            'maxLocks' => $this->maxLocks,
            'releaseAfter' => $this->releaseAfter,
            'timeout' => $this->timeout,
            'servers' => Masked::servers($this->sealed->get('servers'), $this->sealed->get('options')),
            'options' => Masked::options($this->sealed->get('options')),
        ];
    }
}

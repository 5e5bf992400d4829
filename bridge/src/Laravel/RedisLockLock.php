<?php

namespace RedisLock\Bridge\Laravel;

use RedisLock\Bridge\Hold;
use RedisLock\Bridge\LockLog;
use RedisLock\Bridge\Masked;
use RedisLock\Bridge\Sealed;

use Illuminate\Cache\Lock;
use Illuminate\Contracts\Cache\LockTimeoutException;

/**
 * A Laravel cache lock (`Cache::lock($name, $seconds, $owner)`) held in Redis
 * by the redislock extension.
 *
 * - The Redis key is the store's prefix followed by the name; its value is
 *   the lock's owner (Laravel's `owner()`), as with Laravel's own Redis lock.
 * - Two locks on one name exclude each other, also in one process (the
 *   extension's reentrancy is turned off), like Laravel's locks.
 * - A lock outlives the PHP object and the request that took it unless it
 *   is released (Laravel's semantics; the extension's `auto_release` is
 *   off), so `Cache::restoreLock($name, $owner)->release()` in a later
 *   request or job releases it. It ends by itself when its lease ends.
 * - `$seconds > 0`: the lease is $seconds.
 * - `$seconds = 0` (Laravel's "no expiry"): the lease is 15 s (the store's
 *   `auto_renew_ttl`) and the extension renews it in a background thread
 *   every third of that, also after this object is gone (an auto-renewed
 *   hold with `auto_release` off outlives its objects), until it is
 *   released or refreshed (here or through restoreLock()), force-released,
 *   or the request ends. So the lock never stays forever: it is free at
 *   most 15 s after its holder died. In PHP-FPM (and any SAPI with several
 *   requests per process) the request end forgets the request's holds: a
 *   lock taken with `$seconds = 0` and not released in that request then
 *   expires within 15 s. Give it a ttl (`$seconds > 0`) when it must
 *   outlive the request. Laravel features that take a lock with
 *   `$seconds = 0` in a request and release it elsewhere (a ShouldBeUnique
 *   job without `$uniqueFor`, released by the worker) are thus protected
 *   until about 15 s after that request, not until the release: give them
 *   a duration.
 * - block() waits through the extension: the waiter is woken by the
 *   release (no 250 ms polling; betweenBlockedAttemptsSleepFor() has no
 *   effect) and throws LockTimeoutException when the time runs out.
 * - getCurrentOwner(): the extension does not read other holders' tokens
 *   back. It returns this lock's owner when that owner holds the lock, ''
 *   when someone else holds it, and null when it is free. isOwnedBy($owner)
 *   asks Redis about any owner exactly (false for an owner no lock can
 *   have: '', longer than 1024 bytes, or starting with `~~read`).
 * - The option `on_lost` acts on auto-renewed holds (`$seconds = 0`, or
 *   every lock with the option `auto_renew`); a hold with a fixed lease is
 *   not renewed, so it has nothing to report, and the option is left out.
 * - With a logger (the store's: the application's `log`), a block() that
 *   waited longer than the store's `log_wait_over`, and a release() or
 *   refresh() of a hold this object took that finds it lost or past its
 *   ttl are logged ({@see LockLog}); a lock from restoreLock() is not
 *   watched.
 * - The servers and options are kept out of the object's properties (no
 *   password in var_export() or an (array) cast); var_dump(), print_r()
 *   and json_encode() show them masked; serialize() is refused (keep the
 *   name and owner() and call restoreLock()).
 */
class RedisLockLock extends Lock implements \JsonSerializable
{
    use KeepsSecrets;

    /** Lease in seconds of a lock taken with `$seconds = 0`, renewed every third of it. */
    public const AUTO_RENEW_TTL = 15.0;

    /**
     * The servers, and the RedisLock options of every object made here:
     * the user's, with prefix set, reentrancy and auto_release off, and no
     * owner.
     */
    private Sealed $sealed;

    private string $prefix;

    private float $autoRenewTtl;

    /** The RedisLock that acquires for this object (created at first use). */
    private ?\RedisLock $lock = null;

    /** Where lost leases, long waits and long holds are logged (the store's). */
    private LockLog $log;

    /** The hold this object took, while it holds it (only with a logger). */
    private ?Hold $hold = null;

    /**
     * @param  string  $name  the lock's name (the Redis key is $prefix . $name)
     * @param  int  $seconds  lease in seconds; 0 or less: no fixed expiry (an auto-renewed lease)
     * @param  string|null  $owner  the owner token (1 to 1024 bytes); null: a random one
     * @param  string|array<int, string>|null  $servers  a Redis URL or a list of URLs; null: ini redislock.servers
     * @param  array<string, mixed>  $options  RedisLock options (prefix, owner, reentrant and auto_release are set here)
     * @param  string  $prefix  the key prefix
     * @param  float  $autoRenewTtl  the lease of a lock with $seconds = 0
     * @param  LockLog|null  $log  where to log lost leases, long waits and long holds; null: nowhere
     */
    public function __construct(
        $name,
        $seconds,
        $owner = null,
        #[\SensitiveParameter] string|array|null $servers = null,
        #[\SensitiveParameter] array $options = [],
        string $prefix = '',
        float $autoRenewTtl = self::AUTO_RENEW_TTL,
        ?LockLog $log = null,
    ) {
        parent::__construct((string) $name, $seconds, $owner === null ? null : (string) $owner);

        unset($options['owner']);
        $options['prefix'] = $prefix;
        $options['reentrant'] = false;
        $options['auto_release'] = false;

        $this->sealed = new Sealed(['servers' => $servers, 'options' => $options]);
        $this->prefix = $prefix;
        $this->autoRenewTtl = $autoRenewTtl;
        $this->log = $log ?? new LockLog();
    }

    /**
     * Tries once to take the lock.
     *
     * @return bool true when it is now ours
     *
     * @throws \RedisLock\ConnectionException when Redis cannot be used
     */
    public function acquire()
    {
        $acquired = $this->lock()->acquire(0.0);
        $this->log->unsafeServers();
        if ($acquired) {
            $this->hold = $this->log->hold('lock', $this->fixedTtl());
        }

        return $acquired;
    }

    /**
     * Waits up to $seconds for the lock, woken by the holder's release.
     *
     * With a callback: runs it, releases the lock in every case and
     * returns the callback's value. Without: returns true and the lock is
     * held until released.
     *
     * @param  int|float  $seconds
     * @param  callable|null  $callback
     * @return mixed
     *
     * @throws LockTimeoutException when the lock stayed busy for $seconds
     * @throws \RedisLock\ConnectionException when Redis cannot be used
     */
    public function block($seconds, $callback = null)
    {
        $wait = max(0.0, (float) $seconds);
        $start = hrtime(true);
        $acquired = CoroutineWait::acquire(fn (float $w) => $this->lock()->acquire($w), $wait);
        $this->log->waited('lock', $this->name, Hold::since($start), $wait, $acquired, $this->fixedTtl());
        $this->log->unsafeServers();
        if (!$acquired) {
            throw new LockTimeoutException(sprintf('Could not acquire the lock [%s] within %s seconds.', $this->name, $wait));
        }
        $this->hold = $this->log->hold('lock', $this->fixedTtl());

        if (is_callable($callback)) {
            try {
                return $callback();
            } finally {
                $this->release();
            }
        }

        return true;
    }

    /**
     * Releases the lock if this lock's owner holds it (compare-and-delete:
     * never the lock of another owner, e.g. after our lease ran out). Also
     * works on a lock from restoreLock() in another request or process.
     *
     * @return bool true when the owner held it and it is now free
     *
     * @throws \RedisLock\ConnectionException when Redis cannot be used
     */
    public function release()
    {
        if ($this->lock?->token() !== null) {
            $released = $this->lock->release();
            $this->log->ended($this->name, 'release', $this->hold, true, $released);
            $this->hold = null;

            return $released;
        }

        return $this->restored()->release();
    }

    /**
     * Deletes the lock whoever holds it.
     *
     * @return bool true when a lock was deleted (Laravel's contract says
     *     void; callers that ignore the result lose nothing)
     *
     * @throws \RedisLock\ConnectionException when Redis cannot be used
     */
    public function forceRelease()
    {
        return $this->lock()->forceRelease();
    }

    /**
     * Whether anyone holds the lock now (one GET).
     *
     * @throws \RedisLock\ConnectionException when Redis cannot be used
     */
    public function isLocked(): bool
    {
        return $this->lock()->isLocked();
    }

    /**
     * Whether $owner holds the lock now (one GET); with null: whether it is
     * free.
     *
     * @param  string|null  $owner
     * @return bool
     *
     * @throws \RedisLock\ConnectionException when Redis cannot be used
     */
    public function isOwnedBy($owner)
    {
        if ($owner === null) {
            return !$this->isLocked();
        }
        if (!is_scalar($owner) && !$owner instanceof \Stringable) {
            return false;
        }
        $owner = (string) $owner;
        if ($owner === '' || strlen($owner) > 1024 || str_starts_with($owner, '~~read')) {
            return false;  // no lock can have that owner
        }
        try {
            $restored = $this->restored(null, false, $owner);
        } catch (\ValueError) {
            return false;  // an owner token the extension refuses: no lock has it
        }

        return $restored->isAcquired();
    }

    /**
     * Whether this lock's owner holds the lock now (one GET).
     *
     * @return bool
     *
     * @throws \RedisLock\ConnectionException when Redis cannot be used
     */
    public function isOwnedByCurrentProcess()
    {
        return $this->isOwnedBy($this->owner);
    }

    /**
     * Extends the lease of this owner's hold.
     *
     * $seconds > 0: the lease ends $seconds from now (an auto-renewal of
     * this hold in this process stops). 0: no fixed expiry, i.e. renewed
     * leases of 15 s (see the class comment). null: this lock's $seconds.
     *
     * @param  int|null  $seconds
     * @return bool false when this owner does not hold the lock
     *
     * @throws \RedisLock\ConnectionException when Redis cannot be used
     */
    public function refresh($seconds = null)
    {
        $seconds ??= $this->seconds;
        $seconds = is_numeric($seconds) ? (float) $seconds : 0.0;
        // Whether this object's own hold is refreshed (watched by the log).
        $own = $this->lock?->token() !== null;

        if ($seconds > 0) {
            if ($this->lock !== null && !$this->expires()) {
                // Its hold renews on without it until the refresh below.
                $this->lock = null;
                $this->hold = null;
            }
            $refreshed = $this->restored($seconds)->refresh($seconds);
        } elseif ($this->lock?->token() !== null && !$this->expires()) {
            $refreshed = $this->lock->refresh($this->autoRenewTtl);
        } else {
            // Renewed from now on, also after this call (auto_release is off).
            $refreshed = $this->restored($this->autoRenewTtl, true)->refresh($this->autoRenewTtl);
        }
        if ($own && $this->hold !== null) {
            $this->log->ended($this->name, 'refresh', $this->hold, true, $refreshed);
            if ($refreshed) {
                $this->hold->extended($seconds > 0 && !$this->renewsByOption() ? $seconds : null);
            }
        }

        return $refreshed;
    }

    /**
     * The fencing token of this object's current hold (store option
     * `'fencing' => true`): strictly greater than every earlier one for
     * this lock. Null without that option or when this object holds nothing.
     */
    public function fencingToken(): ?int
    {
        return $this->lock?->fencingToken();
    }

    /**
     * The owner of the lock, as far as the extension tells: this lock's
     * owner when it holds the lock, '' when another owner does, null when
     * it is free (two GETs at most).
     *
     * @return string|null
     */
    protected function getCurrentOwner()
    {
        if ($this->isOwnedBy($this->owner)) {
            return $this->owner;
        }

        return $this->isLocked() ? '' : null;
    }

    /**
     * What var_dump() shows: name, seconds, prefix, servers and options
     * with passwords and the owner masked by the extension's own rules, and
     * whether this object holds the lock.
     *
     * @return array<string, mixed>
     */
    public function __debugInfo(): array
    {
        return [
            'name' => $this->name,
            'owner' => Masked::owner($this->owner),
            'seconds' => $this->seconds,
            'prefix' => $this->prefix,
            'servers' => Masked::servers($this->sealed->get('servers'), $this->sealed->get('options')),
            'options' => Masked::options($this->sealed->get('options')),
            'held' => $this->lock?->token() !== null,
        ];
    }

    /** Whether this lock has a fixed lease ($seconds > 0). */
    private function expires(): bool
    {
        return is_numeric($this->seconds) && $this->seconds > 0;
    }

    /** The lease of this lock's holds when it is fixed; null when they are renewed. */
    private function fixedTtl(): ?float
    {
        return $this->expires() && !$this->renewsByOption() ? $this->ttl() : null;
    }

    /** Whether the store's options renew every hold (`auto_renew`). */
    private function renewsByOption(): bool
    {
        return filter_var($this->sealed->get('options')['auto_renew'] ?? false, FILTER_VALIDATE_BOOLEAN);
    }

    /** The lease in seconds of this lock's holds. */
    private function ttl(): float
    {
        return $this->expires() ? (float) $this->seconds : $this->autoRenewTtl;
    }

    /** The RedisLock that acquires for this object. */
    private function lock(): \RedisLock
    {
        if ($this->lock === null) {
            $options = $this->options($this->expires() ? null : true);
            $options['owner'] = $this->owner;
            $this->lock = new \RedisLock($this->name, $this->ttl(), $this->sealed->get('servers'), $options);
        }

        return $this->lock;
    }

    /**
     * A RedisLock that adopts $owner's hold (default: this lock's owner),
     * to release, refresh or check it: the hold that owner has now (one
     * round trip reads its nonce), never a later hold of the same owner.
     */
    private function restored(?float $ttl = null, bool $renew = false, ?string $owner = null): \RedisLock
    {
        return \RedisLock::restore(
            $this->name, $owner ?? $this->owner, $ttl ?? $this->ttl(), $this->sealed->get('servers'), $this->options($renew)
        );
    }

    /**
     * The options of a RedisLock made here: auto_renew set to $renew (null:
     * the store's options decide), and on_lost only on a renewed hold
     * (the extension refuses it without auto_renew).
     *
     * @return array<string, mixed>
     */
    private function options(?bool $renew): array
    {
        $options = $this->sealed->get('options');
        if ($renew !== null) {
            $options['auto_renew'] = $renew;
        }
        // Not renewed: on_lost has nothing to act on. (A malformed
        // auto_renew gives null here and the extension's own error.)
        if (filter_var($options['auto_renew'] ?? false, FILTER_VALIDATE_BOOLEAN, FILTER_NULL_ON_FAILURE) === false) {
            unset($options['on_lost']);
        }

        return $options;
    }
}

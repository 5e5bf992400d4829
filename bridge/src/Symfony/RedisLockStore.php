<?php

namespace RedisLock\Bridge\Symfony;

use Psr\Log\LoggerAwareInterface;
use Psr\Log\LoggerInterface;
use RedisLock\Bridge\Hold;
use RedisLock\Bridge\LockLog;
use RedisLock\Bridge\OptionNames;
use RedisLock;
use Symfony\Component\Lock\BlockingSharedLockStoreInterface;
use Symfony\Component\Lock\BlockingStoreInterface;
use Symfony\Component\Lock\Exception\InvalidArgumentException;
use Symfony\Component\Lock\Exception\InvalidTtlException;
use Symfony\Component\Lock\Exception\LockConflictedException;
use Symfony\Component\Lock\Key;
use Symfony\Component\Lock\Store\ExpiringStoreTrait;

/**
 * A Symfony Lock store on the redislock extension:
 * `new LockFactory(new RedisLockStore('redis://127.0.0.1:6379'))` works
 * unchanged, and a blocking `acquire(true)` is woken by the release instead
 * of Symfony's 100 ms polling.
 *
 * Each Key gets one \RedisLock (not reentrant: two Keys on one resource
 * exclude each other even in one process, as with Symfony's own stores).
 * The Key's state holds the owner token, so a serialized Key can be
 * released or refreshed in another process; create the store with
 * `['auto_release' => false]` for that, since by default the extension
 * releases what a request still holds when it ends (also after a fatal
 * error, which skips Symfony's destructor).
 *
 * Shared (read) locks: `acquireRead()` takes the extension's read hold
 * (many readers, a writer excludes them all, a waiting writer keeps new
 * readers out), and a blocking `acquireRead(true)` is woken by the
 * writer's release too. As with Symfony's RedisStore, `save()` on a Key
 * holding a read lock promotes it (LockConflictedException while other
 * readers hold it, the read lock kept), `saveRead()` on a Key holding the
 * write lock demotes it, and exists(), delete() and putOffExpiration()
 * act on whichever the Key holds. A read hold has no owner token to
 * restore elsewhere: a Key that took one cannot be serialized any more
 * (Symfony's UnserializableKeyException). The extension refuses read
 * holds over several independent servers (Redlock), with `fencing`,
 * `replicas` or `on_lost => interrupt`, and on servers without scripts:
 * its LockException then reaches Symfony's Lock, which wraps it in a
 * LockAcquiringException.
 *
 * The value in Redis is the owner token as a plain string (the
 * extension's layout), not Symfony's RedisStore sorted set: use one kind of
 * store per resource.
 *
 * reset() (Symfony's `kernel.reset`) ends the request scope in a
 * long-running worker: see {@see reset()}. The store is a Symfony
 * ResetInterface when symfony/service-contracts is installed (as in every
 * Symfony application); symfony/lock alone does not need it.
 *
 * Logs: with a PSR-3 logger (setLogger(); the bundle passes the `lock`
 * monolog channel), waits of waitAndSave() and waitAndSaveRead() longer
 * than the option `log_wait_over` (seconds, default 1.0; null: never),
 * and a delete() or putOffExpiration() that finds a hold of this store
 * lost or past its ttl, are logged ({@see LockLog}).
 */
final class RedisLockStore implements BlockingStoreInterface, BlockingSharedLockStoreInterface, ResettableInterface, LoggerAwareInterface
{
    use ExpiringStoreTrait;

    /** Longest single wait of the extension inside waitAndSave() and waitAndSaveRead() (they loop). */
    private const WAIT_SLICE = 3600.0;

    /** @var \WeakMap<Key, RedisLock> */
    private \WeakMap $locks;

    /** The servers and options, out of every dump's reach. */
    private readonly StoreConfig $config;

    /** Where long waits, lost leases and long holds are logged. */
    private readonly LockLog $log;

    /**
     * The holds this store took, while a logger watches them.
     *
     * @var \WeakMap<Key, Hold>
     */
    private \WeakMap $holds;

    /** Whether the holds are renewed (option auto_renew): they have no fixed lease to outlive. */
    private readonly bool $renewed;

    /**
     * An unknown option name is refused here, with the nearest valid one,
     * not at the first acquire(). Values and servers are the extension's
     * to check, when a Key is first saved (its ValueError); the bundle
     * checks them when the container is built.
     *
     * @param string|array|null $servers     URL(s) as for `new RedisLock()`; null: ini redislock.servers
     * @param array             $options     the extension's options (prefix, auto_renew, sentinel, cluster, ...);
     *                                       `reentrant` is always false here, and `owner` is refused;
     *                                       and the bridge's `log_wait_over` (seconds, default 1.0; null: never)
     * @param float             $initialTtl  the lease of save() in seconds, until the Lock's ttl is applied
     *
     * @throws InvalidTtlException      when $initialTtl is not positive
     * @throws InvalidArgumentException on an unknown option (naming the nearest valid one), `owner`,
     *                                  or a `log_wait_over` that is not null or a number of seconds
     */
    public function __construct(
        #[\SensitiveParameter] string|array|null $servers = null,
        #[\SensitiveParameter] array $options = [],
        private float $initialTtl = 300.0,
    ) {
        if (!($initialTtl > 0)) {
            throw new InvalidTtlException(sprintf('"%s()" expects a strictly positive TTL, got %s.', __METHOD__, $initialTtl));
        }
        if (isset($options['owner'])) {
            // One owner for every Key would let one Key's release end
            // another's hold: each Key gets its own token.
            throw new InvalidArgumentException('RedisLockStore: option "owner" is not supported (each Key has its own token)');
        }
        OptionNames::refuseUnknown('RedisLockStore', InvalidArgumentException::class, $options, ['owner']);
        $this->log = new LockLog(null, LockLog::waitOver($options, InvalidArgumentException::class, 'RedisLockStore'));
        $options = OptionNames::withoutBridge($options);
        $options['reentrant'] = false;
        $this->renewed = filter_var($options['auto_renew'] ?? false, FILTER_VALIDATE_BOOLEAN);
        $this->config = new StoreConfig($servers, $options);
        $this->locks = new \WeakMap();
        $this->holds = new \WeakMap();
    }

    /**
     * Logs through $logger: waits longer than `log_wait_over`, lost leases
     * and holds longer than their ttl ({@see LockLog}). The bundle passes
     * the `lock` monolog channel.
     */
    public function setLogger(LoggerInterface $logger): void
    {
        $this->log->setLogger($logger);
    }

    /**
     * What var_dump() and print_r() show: servers and options with
     * passwords and owners masked by the extension's own rules.
     *
     * @return array<string, mixed>
     */
    public function __debugInfo(): array
    {
        return $this->config->__debugInfo() + ['initialTtl' => $this->initialTtl];
    }

    /**
     * Refused, as Symfony refuses to serialize a Lock: the store carries
     * its servers' credentials.
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
     * Takes the lock for the Key, or extends it when the Key holds it
     * already; a Key holding a read lock is promoted (only when no other
     * reader holds the resource: LockConflictedException otherwise, and the
     * Key keeps its read lock).
     */
    public function save(Key $key): void
    {
        $key->reduceLifetime($this->initialTtl);
        $lock = $this->lockOf($key);
        if ($lock->token() !== null && $lock->isAcquired()) {
            $taken = $lock->refresh($this->initialTtl);
            $this->refreshed($key, $taken, $this->initialTtl);
        } else {
            $taken = $lock->acquire();
            if ($taken) {
                $this->took($key, 'lock');
            }
        }
        if (!$taken) {
            throw new LockConflictedException();
        }
        $key->setState(self::class, $lock->token());
        $this->checkNotExpired($key);
    }

    /**
     * Waits until the lock is free and takes it; woken by the holder's
     * release. A Key holding a read lock waits as a writer until the other
     * readers are gone (new readers wait behind it), then is promoted.
     */
    public function waitAndSave(Key $key): void
    {
        $lock = $this->lockOf($key);
        if ($lock->token() !== null && $lock->isAcquired()) {
            $this->save($key);
            return;
        }
        $start = hrtime(true);
        while (!$lock->acquire(self::WAIT_SLICE)) {
            // A wait longer than an hour: wait again (PHP's time limit ends it).
        }
        $this->log->waited('lock', (string) $key, Hold::since($start), null, true, $this->renewed ? null : $this->initialTtl);
        $this->took($key, 'lock');
        // The lease starts now, not when the wait began.
        $key->resetLifetime();
        $key->reduceLifetime($this->initialTtl);
        $key->setState(self::class, $lock->token());
        $this->checkNotExpired($key);
    }

    /**
     * Takes a read lock for the Key: shared with other readers, refused
     * while a writer holds the resource or waits for it. On a Key holding
     * the write lock, turns it into a read lock (demotion, at once); on one
     * holding a read lock, extends it.
     */
    public function saveRead(Key $key): void
    {
        $key->reduceLifetime($this->initialTtl);
        if (!$this->lockOf($key)->acquireRead()) {
            throw new LockConflictedException();
        }
        $this->took($key, 'read');
        $this->readHeld($key);
        $this->checkNotExpired($key);
    }

    /**
     * Waits until no writer holds the resource or waits ahead, and takes a
     * read lock; woken by the writer's release, not by a poll. A Key that
     * holds the lock already is demoted or extended at once, as by
     * saveRead().
     */
    public function waitAndSaveRead(Key $key): void
    {
        $lock = $this->lockOf($key);
        if ($lock->isAcquired()) {
            $this->saveRead($key);
            return;
        }
        $start = hrtime(true);
        while (!$lock->acquireRead(self::WAIT_SLICE)) {
            // A wait longer than an hour: wait again (PHP's time limit ends it).
        }
        $this->log->waited('read', (string) $key, Hold::since($start), null, true, $this->renewed ? null : $this->initialTtl);
        $this->took($key, 'read');
        // The lease starts now, not when the wait began.
        $key->resetLifetime();
        $key->reduceLifetime($this->initialTtl);
        $this->readHeld($key);
        $this->checkNotExpired($key);
    }

    /** Sets the lease of the Key's hold (read or write) to $ttl seconds; LockConflictedException when it is not ours any more. */
    public function putOffExpiration(Key $key, float $ttl): void
    {
        $key->reduceLifetime($ttl);
        $lock = $this->heldLockOf($key);
        $held = $lock !== null && isset($this->holds[$key]) && LockLog::holdsHere($lock);
        // The extension's shortest lease is 1 ms; a shorter one has run out
        // by the check below, which releases it and reports it expired.
        $refreshed = $lock !== null && $lock->refresh(max($ttl, 0.001));
        $this->refreshed($key, $refreshed, $ttl, $held);
        if (!$refreshed) {
            throw new LockConflictedException();
        }
        $this->checkNotExpired($key);
    }

    /** Releases the Key's hold, read or write (only if it is still ours). */
    public function delete(Key $key): void
    {
        $lock = $this->heldLockOf($key);
        if ($lock !== null) {
            $hold = $this->holds[$key] ?? null;
            $held = $hold !== null && LockLog::holdsHere($lock);
            $this->log->ended((string) $key, 'release', $hold, $held, $lock->release());
        }
        unset($this->locks[$key], $this->holds[$key]);
        $key->removeState(self::class);
    }

    /** Whether the Key's hold (read or write) is still ours in Redis. */
    public function exists(Key $key): bool
    {
        return $this->heldLockOf($key)?->isAcquired() ?? false;
    }

    /**
     * Ends the request scope, as the end of a PHP-FPM request does: every
     * hold of this process with `auto_release` on is released in Redis
     * (`RedisLock::releaseAll()`), and holds left auto-renewing by objects
     * that are gone stop being renewed.
     *
     * Symfony calls it through `kernel.reset` (services implementing
     * ResetInterface are tagged by autoconfiguration): between the requests
     * of a long-running worker (FrankenPHP worker mode, RoadRunner, Swoole
     * through Symfony Runtime) and between messages of a Messenger worker,
     * where PHP's own request end, and so the extension's, comes only once
     * per worker.
     *
     * It is process-wide: the holds of every store and of every
     * `\RedisLock` used directly end too, not only this store's; a Lock
     * object that held one holds nothing afterwards (isAcquired() false,
     * release() does nothing). Semaphore permits are holds of the request
     * too: every `RedisLock\Semaphore` permit with `auto_release` on is
     * given back, RedisLockSemaphoreStore's and those of a Semaphore used
     * directly. Holds taken with `['auto_release' => false]` (e.g. a Key
     * meant for another process) stay.
     */
    public function reset(): void
    {
        $this->holds = new \WeakMap();
        RedisLock::releaseAll();
    }

    /** The Key took a hold ($primitive: `lock` or `read`): watched from now on when there is a logger. */
    private function took(Key $key, string $primitive): void
    {
        $this->log->unsafeServers();
        $hold = $this->holds[$key] ?? null;
        if ($primitive === 'read' && $hold !== null && $hold->primitive === 'read' && !$hold->reported()) {
            // saveRead() on a Key that reads already extends its hold.
            $hold->extended($this->renewed ? null : $this->initialTtl);
        } elseif (($hold = $this->log->hold($primitive, $this->renewed ? null : $this->initialTtl)) !== null) {
            $this->holds[$key] = $hold;
        }
    }

    /**
     * The Key's hold was refreshed to $ttl, or found lost ($refreshed false).
     *
     * @param bool|null $held whether the extension held it before (null: yes, it was just checked)
     */
    private function refreshed(Key $key, bool $refreshed, float $ttl, ?bool $held = null): void
    {
        $hold = $this->holds[$key] ?? null;
        if ($hold === null) {
            return;
        }
        $this->log->ended((string) $key, 'refresh', $hold, $held ?? true, $refreshed);
        if ($refreshed) {
            $hold->extended($this->renewed ? null : $ttl);
        }
    }

    /**
     * The Key now holds a read lock, which lives only in its lock object
     * (the extension has no token to restore a read hold from): no write
     * token left in its state for another process to restore, and no
     * serialized copy that would believe it holds nothing.
     */
    private function readHeld(Key $key): void
    {
        $key->removeState(self::class);
        $key->markUnserializable();
    }

    /** The Key's lock object: its own, one restored from its state, or a new one. */
    private function lockOf(Key $key): RedisLock
    {
        return $this->heldLockOf($key)
            ?? $this->locks[$key] = new RedisLock((string) $key, $this->initialTtl, $this->config->servers(), $this->config->options());
    }

    /** The Key's lock object when the Key was saved (here, or in another process), else null. */
    private function heldLockOf(Key $key): ?RedisLock
    {
        if (isset($this->locks[$key])) {
            return $this->locks[$key];
        }
        if (!$key->hasState(self::class)) {
            return null;
        }
        return $this->locks[$key] = RedisLock::restore(
            (string) $key,
            $key->getState(self::class),
            $this->initialTtl,
            $this->config->servers(),
            $this->config->options(),
        );
    }
}

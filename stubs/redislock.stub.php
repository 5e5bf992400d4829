<?php

/**
 * Stub of the redislock extension (version 0.2.0), for IDEs and static
 * analysers. It matches what the extension exports: php-tests/api/002-stub.phpt
 * compares the two through Reflection.
 *
 * @generate-class-entries
 */

namespace {
    /**
     * A distributed lock on one key in Redis.
     *
     * acquire() writes a fresh random token with `SET key token NX PX ttl`;
     * release() deletes the key only if it still holds that token (Lua
     * compare-and-delete). Holds still open when the object is destroyed or the
     * request ends are released (option `auto_release`, default true).
     */
    final class RedisLock
    {
        /**
         * Describes a lock; connects to nothing until it is used.
         *
         * @param string $key Lock name; the Redis key is `prefix . $key` (`prefix{key}` on Cluster when it has no hash tag).
         * @param float|null $ttl Lease in seconds (ms precision); null: ini redislock.default_ttl.
         * @param string|array|null $servers A URL or a list of URLs; null: ini redislock.servers.
         * @param array{prefix?: string, auto_release?: bool, auto_renew?: bool, max_hold?: float|null,
         *     fencing?: bool, retry_delay?: float, connect_timeout?: float, read_timeout?: float,
         *     cluster?: bool, sentinel?: string|null, sentinel_user?: string|null, sentinel_password?: string|null,
         *     replicas?: int, drift_factor?: float, tls_verify?: bool,
         *     tls_ca?: string|null, tls_cert?: string|null, tls_key?: string|null, on_lost?: "ignore"|"interrupt",
         *     reentrant?: bool, owner?: string|null} $options
         *     Bool options take a bool, 0, 1 or an ini word ("1", "0", "true", "false", "on", "off", "yes", "no", "").
         * @throws \ValueError on an empty key, a bad ttl, a malformed URL or an unknown option
         * @throws \RedisLock\LockException when an option is not available on this topology (fencing or replicas over Redlock)
         */
        public function __construct(
            string $key,
            ?float $ttl = null,
            #[\SensitiveParameter] array|string|null $servers = null,
            #[\SensitiveParameter] array $options = [],
        ) {}

        /**
         * Takes the lock. $wait = 0 tries once; > 0 waits up to $wait seconds, woken by the
         * holder's release (no polling), and returns false when the wait runs out.
         *
         * @return bool true when the lock is ours, with a lease that is not over by this
         *     process's clock (counted from the send of the request that won it)
         * @throws \RedisLock\ConnectionException when Redis cannot be used
         */
        public function acquire(float $wait = 0.0): bool {}

        /**
         * Takes a shared (read) hold: many readers at once, none while a writer holds the lock
         * or waits for it (a waiting writer keeps new readers out). $wait as for acquire(),
         * woken without polling. On an object that already reads, extends its lease. On an
         * object holding the write lock, turns it into a read hold (demotion, never waits);
         * acquire() on an object holding a read hold promotes it once no other reader holds
         * the lock (withLock() too: it then releases the write hold, and the object holds
         * nothing). release(), refresh(), isAcquired() and remainingTtl() act on whichever
         * hold the object has; token() and fencingToken() are null for a read hold. A read
         * hold belongs to its object (not to a Fiber, never joined by another object): it is
         * released at the object's end and at request end (auto_release), renewed with
         * auto_renew, and a forked child does not hold it.
         *
         * @return bool true when this object now holds a read hold
         * @throws \ValueError when $wait is negative, NaN, infinite or over a year
         * @throws \RedisLock\LockException over Redlock, with option fencing, owner, replicas or
         *     on_lost => "interrupt", on a server that refuses scripts, or on a write hold this
         *     process holds more than once (refused before any read hold is taken)
         * @throws \RedisLock\ConnectionException when Redis cannot be used
         */
        public function acquireRead(float $wait = 0.0): bool {}

        /**
         * Releases the lock (compare-and-delete).
         *
         * @return bool true when we held it and it is now free; false when we did not hold it
         *     or the lease had been lost
         * @throws \RedisLock\ConnectionException when Redis cannot be used
         */
        public function release(): bool {}

        /**
         * Acquires, calls $callback($this), releases in every case and returns the callback's value.
         * On an object holding a read hold (acquireRead()) it promotes it, as acquire() does, and
         * the release at the end ends it: the object then holds nothing.
         *
         * @template T
         * @param callable(RedisLock): T $callback
         * @return T
         * @throws \RedisLock\TimeoutException when the lock could not be acquired within $wait seconds
         * @throws \RedisLock\LockLostException when the lease was lost while the callback ran
         */
        public function withLock(callable $callback, float $wait = 0.0): mixed {}

        /**
         * Extends our lease to $ttl seconds (null: the lock's ttl).
         *
         * @return bool false when the lease is no longer ours
         */
        public function refresh(?float $ttl = null): bool {}

        /**
         * Whether the lease is still ours: false once it is over by this process's clock;
         * with auto_renew from the renewal thread's knowledge (no round trip), else one GET.
         */
        public function isAcquired(): bool {}

        /** Asks Redis whether anyone holds the lock (this process or another). */
        public function isLocked(): bool {}

        /** Seconds left on our lease; null when it is not ours. */
        public function remainingTtl(): ?float {}

        /** The lock's key, without prefix. */
        public function key(): string {}

        /** The owner token of the current hold (hand it to restore()); null when not held. */
        public function token(): ?string {}

        /**
         * The fencing token of the current hold: strictly greater than every earlier one for this key.
         * Null without option fencing, when not held, or for a hold taken over with restore().
         */
        public function fencingToken(): ?int {}

        /**
         * Deletes the lock whoever holds it.
         *
         * @return bool true when a lock was deleted
         */
        public function forceRelease(): bool {}

        /**
         * Adopts a hold made elsewhere (another process, an earlier request) from its key and token:
         * the hold that token has now (one round trip reads it), never a later hold of the same token
         * (a fixed owner's next one). Nothing is believed of it before Redis answers a command of it.
         *
         * @throws \RedisLock\ConnectionException when Redis cannot be reached
         */
        public static function restore(
            string $key,
            #[\SensitiveParameter] string $token,
            ?float $ttl = null,
            #[\SensitiveParameter] array|string|null $servers = null,
            #[\SensitiveParameter] array $options = [],
        ): RedisLock {}

        /**
         * Ends the request scope now, for worker loops that PHP's request end does not reach
         * (RoadRunner's plain worker, a queue worker between jobs): releases every hold this
         * request took (in every Fiber) that request end would release (auto_release), and gives
         * back such RedisLock\Semaphore permits, exactly as request end does. Objects whose holds ended hold nothing afterwards (isAcquired() false,
         * release() false, withLock() returns normally), and a later acquire of the same key
         * competes anew (reentrancy does not cross the call). Holds with auto_release => false
         * stay with their live objects (renewed, released by them); other objects no longer join
         * them. The holds left renewing by their gone objects stop being renewed, as at request end.
         *
         * @return int how many locks and permits were released in Redis (distinct keys; a
         *     reentrant hold counts once; a hold whose lease was already lost is not counted)
         */
        public static function releaseAll(): int {}

        /**
         * What Redis knows of the lock on $key, whoever holds it (this process, another, or
         * nobody; a writer or readers), and of the RedisLock\Semaphore of the same name.
         * Validated like the constructor (same ValueError and TypeError messages, nothing sent for
         * a call that fails validation); one round trip that reads only (a read-only script on the
         * server of the key: every Redlock master at once, the Cluster master of the key's slot,
         * the Sentinels' master; the first time in a process on a server, its INFO before).
         * Owner tokens never appear in exception messages.
         *
         * - held: whether the lock is held, by a writer or by readers (over Redlock: a majority of
         *   the masters hold it under one token);
         * - mode: "write" (acquire()), "read" (acquireRead()), or null when free;
         * - owners: the writer's owner token (the `owner` option's string when the holder set one),
         *   as a list; for readers the tokens of at most 64 live readers, soonest lease end first;
         *   empty when free;
         * - readers: how many live readers hold it (all of them); 0 unless mode is "read";
         * - ttl: seconds left on the lease (over Redlock the least among the masters that hold it;
         *   for readers the longest live reader's; INF when the key has no expiry); null when free;
         * - waiting: live waiters in the lock's queue, writers and readers (over Redlock the most
         *   on any master);
         * - fence: the current write hold's fencing token (option fencing); null when free,
         *   read-held or unfenced;
         * - semaphore: null when Redis keeps nothing of a semaphore of that name (always over
         *   Redlock, where semaphores do not run), else an array: held (bool: a permit is in
         *   use), permits (its number of permits, kept until a second past the last lease set
         *   ended), holders (permits in use: a holder of 3 counts 3), owners (at most 64 of the
         *   holders' tokens, soonest lease end first), ttl (seconds left on the longest live
         *   lease, or null) and waiting (live waiters);
         * - unsafe: the lock's servers that can lose a held lock by themselves (an evicting
         *   maxmemory, no append-only file), one row per server and reason: server, reason
         *   ("eviction", "no_aof"), detail (the consequence and the fix); read with INFO once
         *   per server and process; a server that refuses INFO is not listed (the command
         *   line's doctor reports it as unknown).
         *
         * @param string $key Lock (and semaphore) name, as for the constructor.
         * @param string|array|null $servers A URL or a list of URLs; null: ini redislock.servers.
         * @param array $options As for the constructor (prefix, cluster, sentinel, timeouts, TLS, ...).
         * @return array{held: bool, mode: 'write'|'read'|null, owners: list<string>, readers: int,
         *     ttl: float|null, waiting: int, fence: int|null, semaphore: array{held: bool,
         *     permits: int|null, holders: int, owners: list<string>, ttl: float|null,
         *     waiting: int}|null, unsafe: list<array{server: string, reason: string, detail: string}>}
         * @throws \ValueError on an empty key, a malformed URL or an unknown option
         * @throws \RedisLock\ConnectionException when Redis cannot be used (over Redlock: no majority answered)
         */
        public static function inspect(
            string $key,
            #[\SensitiveParameter] array|string|null $servers = null,
            #[\SensitiveParameter] array $options = [],
        ): array {}

        /**
         * A checkup of every server under the lock on $key (Redlock's masters, a Sentinel
         * group's master and replicas, every Cluster node, masters first), one list entry per
         * server: server (password masked), verdict ("safe": known and nothing unsafe;
         * "unsafe"; "unknown": INFO refused or no answer), round_trip_ms (a PING, the least of
         * three; null without an answer), what INFO says (version, role, replicas, cluster,
         * maxmemory, maxmemory_policy, aof; null where it did not), appendfsync (CONFIG GET;
         * null where refused), findings (severity "unsafe"/"unknown"/"note", reason, detail:
         * the consequence and the fix), and whether the server has what the lock protocol
         * uses: scripts, client_unblock, compare_delete (DELIFEQ or DELEX), acl (this user may
         * run the lock's commands on its keys), and time_in_scripts (no lock script needs it;
         * scripts of one's own may), each {status:
         * "yes"|"no"|"unknown", detail}. Reads and writes no key. The command line's
         * `redislock doctor` prints it.
         *
         * @param string $key Lock name, as for the constructor (its prefix and key decide what the ACL is asked about).
         * @param string|array|null $servers A URL or a list of URLs; null: ini redislock.servers.
         * @param array $options As for the constructor (prefix, cluster, sentinel, timeouts, TLS, ...).
         * @return list<array{server: string, verdict: 'safe'|'unsafe'|'unknown', round_trip_ms: float|null,
         *     version: string|null, role: string|null, replicas: int|null, cluster: bool|null,
         *     maxmemory: int|null, maxmemory_policy: string|null, aof: bool|null, appendfsync: string|null,
         *     findings: list<array{severity: string, reason: string, detail: string}>,
         *     scripts: array{status: string, detail: string}, time_in_scripts: array{status: string, detail: string},
         *     client_unblock: array{status: string, detail: string}, compare_delete: array{status: string, detail: string},
         *     acl: array{status: string, detail: string}}>
         * @throws \ValueError on an empty key, a malformed URL or an unknown option
         * @throws \RedisLock\ConnectionException when the servers cannot be found (a Sentinel or Cluster that does not answer)
         */
        public static function diagnose(
            string $key,
            #[\SensitiveParameter] array|string|null $servers = null,
            #[\SensitiveParameter] array $options = [],
        ): array {}

        /**
         * The servers this process found able to lose a held lock by themselves (option
         * unsafe_server "warn"), once per server and reason, in the order found: server
         * (password masked), reason ("eviction", "no_aof"), detail (the consequence and the
         * fix). No round trip; a forked child starts with none.
         *
         * @return list<array{server: string, reason: string, detail: string}>
         */
        public static function unsafeServers(): array {}

        /** A hold has one owner: clone is refused. */
        private function __clone() {}

        /** What var_dump() shows: key, Redis key, ttl, servers (passwords masked), hold state. */
        public function __debugInfo(): array {}

        /**
         * Lock statistics of a scope: "pool" (every process forked from the one that loaded
         * the extension, e.g. a PHP-FPM pool, surviving worker recycling; on ZTS every thread),
         * "process" (this process since it started; a forked child starts from zero), or null
         * (php.ini's redislock.stats: the pool by default).
         *
         * Totals over every primitive: acquires (= acquired + timeouts + busy + errors),
         * acquired, contended (held by someone else at the first try), timeouts (a wait ran
         * out), busy (held, no wait asked), errors (threw), releases, lost_leases, renewals,
         * handovers (given the hold while queued), wait_p50_us / wait_p99_us / wait_max_us /
         * wait_sum_us (how long successful acquires took, µs; percentiles within 6.25 %),
         * reconnects; scope, enabled (false when redislock.stats does not count this scope:
         * all figures are then zero); the same counters per primitive under primitives
         * (lock, read, permit); and the hottest names (contended acquires only, at most 64,
         * most waited first) under names, with names_untracked; and unsafe_servers, the
         * servers this process found able to lose a held lock (as unsafeServers()).
         *
         * @param "pool"|"process"|null $scope
         * @return array{acquires: int, acquired: int, contended: int, timeouts: int, busy: int,
         *     errors: int, releases: int, lost_leases: int, renewals: int, handovers: int,
         *     wait_p50_us: int, wait_p99_us: int, wait_max_us: int, wait_sum_us: int,
         *     reconnects: int, scope: string, enabled: bool,
         *     primitives: array{lock: array<string, int>, read: array<string, int>, permit: array<string, int>},
         *     names: list<array{primitive: string, name: string, contended: int, timeouts: int, wait_us: int}>,
         *     names_untracked: int, unsafe_servers: list<array{server: string, reason: string, detail: string}>}
         * @throws \ValueError when $scope is not "pool", "process" or null
         */
        public static function stats(?string $scope = null): array {}

        /**
         * The statistics of php.ini's redislock.stats scope (the pool by default) in
         * Prometheus's text exposition format 0.0.4 (Content-Type
         * "text/plain; version=0.0.4"): redislock_acquires_total{primitive,result},
         * redislock_contended_total, redislock_handovers_total, redislock_releases_total,
         * redislock_lost_leases_total, redislock_renewals_total, redislock_reconnects_total,
         * the histogram redislock_wait_seconds{primitive}, the hottest names'
         * redislock_name_*_total{primitive,name}, redislock_server_unsafe{server,reason} (1 per
         * server this process found able to lose a held lock), and redislock_info{version,scope}.
         */
        public static function metrics(): string {}
    }
}

namespace RedisLock {
    /**
     * N permits under one name in Redis, each holder with a lease of its own.
     *
     * acquire() takes a permit (one round trip when one is free) or waits in
     * line, woken when a permit is given back (FIFO, no polling); release()
     * gives it back. A crashed holder's permit comes back when its lease ends
     * (plus 0.5 s of allowed clock difference). Permits still held when the
     * object is destroyed or the request ends are given back (option
     * `auto_release`). One server, Sentinel or Cluster; several independent
     * servers (Redlock) are refused with a LockException.
     */
    final class Semaphore
    {
        /**
         * Describes a semaphore; connects to nothing until it is used.
         *
         * @param string $name Semaphore name; its keys are `prefix . $name . "~~s"` and `...~~s~~*`.
         * @param int $permits Holders at once, 1 to 1,000,000; every user of the name must pass the same.
         * @param float|null $ttl Lease of each permit in seconds; null: ini redislock.default_ttl.
         * @param string|array|null $servers One URL, or a list for Sentinel or Cluster; null: ini redislock.servers.
         * @param array $options As for RedisLock, except fencing, owner, replicas and on_lost => 'interrupt' (refused).
         * @throws \ValueError on a bad argument or option
         * @throws LockException over Redlock
         */
        public function __construct(
            string $name,
            int $permits,
            ?float $ttl = null,
            #[\SensitiveParameter] string|array|null $servers = null,
            #[\SensitiveParameter] array $options = [],
        ) {}

        /**
         * Takes $count permits at once: $wait = 0 tries once; > 0 waits up to $wait seconds in line,
         * first come, first served (as Go's semaphore.Weighted: a waiter asking more than is free
         * holds the ones behind it). $count is 1 to the semaphore's permits (at most 1,000).
         * An object holds at most one hold (LockException if it holds one).
         *
         * @throws \ValueError on a negative wait or a $count out of range
         */
        public function acquire(float $wait = 0.0, int $count = 1): bool {}

        /** Gives all of this object's permits back; true when it held them and they were still its own. */
        public function release(): bool {}

        /** Extends our lease to $ttl seconds (null: the semaphore's ttl); false when the permit is no longer ours. */
        public function refresh(?float $ttl = null): bool {}

        /**
         * Acquires $count permits (else TimeoutException), calls $callback($this), gives them back
         * in every case and returns the callback's value; LockLostException when the lease ended
         * meanwhile.
         */
        public function withPermit(callable $callback, float $wait = 0.0, int $count = 1): mixed {}

        /** Whether the permit is still ours (asks Redis). */
        public function isAcquired(): bool {}

        /** Seconds left on our lease, or null when the permit is not ours. */
        public function remainingTtl(): ?float {}

        /** Shows name, Redis key, permits, ttl, servers (passwords masked) and whether a permit is held. */
        public function __debugInfo(): array {}

        private function __clone() {}
    }

    /** Base of every exception the extension throws. */
    class LockException extends \RuntimeException {}

    /** Redis could not be used: unreachable, refused, authentication failed, I/O timeout. */
    class ConnectionException extends LockException {}

    /** withLock() could not acquire the lock within its wait. */
    class TimeoutException extends LockException {}

    /** The lease expired or was taken by someone else while we held it. */
    class LockLostException extends LockException {}
}

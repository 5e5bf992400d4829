<?php

namespace RedisLock\Bridge\Laravel;

use RedisLock\Bridge\LockLog;
use RedisLock\Bridge\Masked;
use RedisLock\Bridge\Sealed;

use Illuminate\Contracts\Cache\Factory as CacheFactory;
use Illuminate\Contracts\Cache\LockProvider;
use Illuminate\Contracts\Cache\Repository as CacheRepository;
use Illuminate\Contracts\Cache\Store;

/**
 * The cache store of the `redislock` driver: locks from the redislock
 * extension, cache entries from another store.
 *
 * lock() and restoreLock() return a {@see RedisLockLock} on the Redis key
 * `prefix . $name`; funnel() a {@see ConcurrencyLimiterBuilder} on a
 * semaphore named `prefix . $name`. Cache entries (get, put, many, increment, forget, flush,
 * ...) are not kept by redislock: they go to the cache store named by the
 * config's `store` key (resolved through the cache manager at first use).
 * Without `store` they throw a \LogicException that says to set it.
 *
 * Config keys (any other is refused when the store is built, see
 * {@see StoreConfig}):
 * - `connection` (a `database.redis` connection, e.g. `default`; or
 *   `lock_connection`, which wins, as in Laravel's redis store): the
 *   server, credentials, database and TLS of that connection, and the
 *   key of Laravel's own redis store: the connection's prefix, the cache
 *   prefix (`prefix`, else `cache.prefix`), `:`, the name. A lock here and
 *   a lock of Laravel's redis store on the same name exclude each other.
 * - `servers` (a URL or a list of URLs; null: ini redislock.servers), not
 *   with `connection`; the key is then `prefix . $name` (no `:` added).
 * - `options` (RedisLock options; `prefix`, `owner`, `reentrant` and
 *   `auto_release` are set by the bridge), `prefix` (null: the
 *   application's `cache.prefix`), `store` (the store for cache entries),
 *   `auto_renew_ttl` (seconds, default 15: the lease of a lock taken with
 *   `$seconds = 0`, renewed every third of it).
 * - `options.log_wait_over` (the bridge's own option, default 1.0; null:
 *   never): with a logger (the provider passes the application's `log`),
 *   waits longer than this many seconds, lost leases and holds longer than
 *   their ttl are logged ({@see LockLog}). Without a logger nothing is.
 *
 * The servers and options are kept out of the object's properties, so no
 * password shows in var_export() or an (array) cast; var_dump(),
 * print_r() and json_encode() show them masked; serialize() is refused.
 */
class RedisLockStore implements Store, LockProvider, \JsonSerializable
{
    use KeepsSecrets;

    /** Servers and options (they may carry a password), and the cache manager, weakly. */
    private Sealed $sealed;

    /** The Redis key prefix of the locks (the connection's prefix included). */
    private string $prefix;

    /** The database.redis connection of the locks, or null (`servers`). */
    private ?string $connection;

    private ?string $entryStoreName;

    private float $autoRenewTtl;

    /** Where lost leases, long waits and long holds of this store's locks and funnels are logged. */
    private LockLog $log;

    /**
     * @param  CacheFactory|null  $cache  resolves the `store` for cache entries (the cache manager)
     * @param  array<string, mixed>  $config  the store's config: connection or servers, options, prefix, store, auto_renew_ttl
     * @param  string  $defaultPrefix  the prefix when the config has none (the application's cache.prefix)
     * @param  array<string, mixed>|null  $redis  the application's database.redis configuration (for `connection`)
     * @param  \Psr\Log\LoggerInterface|null  $logger  where to log lost leases, long waits and long holds; null: nowhere
     *
     * @throws \InvalidArgumentException when a config key is unknown or a value is wrong
     */
    public function __construct(
        ?CacheFactory $cache,
        #[\SensitiveParameter] array $config = [],
        string $defaultPrefix = '',
        #[\SensitiveParameter] ?array $redis = null,
        ?\Psr\Log\LoggerInterface $logger = null,
    ) {
        $read = StoreConfig::read($config, $defaultPrefix, $redis);
        // The cache manager, weakly, in the sealed values too: PHP 8.4's
        // print_r() and (array) casts show what a WeakReference refers to,
        // and the manager's config holds every store's password.
        $this->sealed = new Sealed([
            'servers' => $read['servers'],
            'options' => $read['options'],
            'cache' => $cache === null ? null : \WeakReference::create($cache),
        ]);
        $this->prefix = $read['prefix'];
        $this->connection = $read['connection'];
        $this->entryStoreName = $read['store'];
        $this->autoRenewTtl = $read['auto_renew_ttl'];
        $this->log = new LockLog($logger, $read['log_wait_over']);
    }

    /**
     * Logs lost leases, long waits and long holds of this store's locks
     * and funnels (those made before too) through $logger; null: nowhere.
     * The provider sets the application's `log`; another channel:
     * `Cache::store('locks')->getStore()->setLogger(Log::channel('locks'))`.
     */
    public function setLogger(?\Psr\Log\LoggerInterface $logger): void
    {
        $this->log->setLogger($logger);
    }

    /**
     * A lock on `prefix . $name`.
     *
     * @param  string  $name
     * @param  int  $seconds  lease in seconds; 0: no fixed expiry (an auto-renewed lease, see RedisLockLock)
     * @param  string|null  $owner  the owner token; null: a random one
     * @return RedisLockLock
     */
    public function lock($name, $seconds = 0, $owner = null)
    {
        return new RedisLockLock(
            (string) $name,
            $seconds,
            $owner,
            $this->sealed->get('servers'),
            $this->sealed->get('options'),
            $this->prefix,
            $this->autoRenewTtl,
            $this->log,
        );
    }

    /**
     * A funnel on `prefix . $name`: at most `limit($n)` callbacks at once,
     * in every process, like Laravel's `Redis::funnel()` but woken without
     * polling and working on Redis Cluster as is (see
     * {@see ConcurrencyLimiterBuilder}).
     *
     *     Cache::store('locks')->funnel('imports')->limit(4)->block(10)->then(fn () => ...);
     *
     * @param  string  $name
     * @return ConcurrencyLimiterBuilder
     */
    public function funnel($name)
    {
        $options = $this->sealed->get('options');
        // Lock options that a semaphore refuses or has no use for (on_lost
        // "interrupt" is for locks only); the store's locks keep them.
        unset(
            $options['auto_renew'], $options['max_hold'], $options['fencing'], $options['owner'],
            $options['replicas'], $options['reentrant'], $options['on_lost'],
        );
        $options['prefix'] = $this->prefix;

        return new ConcurrencyLimiterBuilder((string) $name, $this->sealed->get('servers'), $options, $this->log);
    }

    /**
     * A lock of a known owner (taken elsewhere: an earlier request, another
     * job), to release or check it.
     *
     * @param  string  $name
     * @param  string  $owner
     * @return RedisLockLock
     */
    public function restoreLock($name, $owner)
    {
        return $this->lock($name, 0, $owner);
    }

    /**
     * The Redis key prefix of the locks (their key is prefix . name; with
     * `connection`, the connection's prefix and the cache prefix with `:`).
     *
     * @return string
     */
    public function getPrefix()
    {
        return $this->prefix;
    }

    /**
     * The Redis key of the lock $name (with `connection`: the key of
     * Laravel's own redis store for that name).
     */
    public function lockKey(string $name): string
    {
        return $this->prefix . $name;
    }

    /**
     * What Redis knows of the lock $name, whoever holds it
     * (`RedisLock::inspect()`: mode, owners, ttl, readers, waiting, the
     * semaphore of the name), on this store's servers and key prefix.
     *
     * @return array<string, mixed>
     * @throws \RedisLock\LockException when Redis cannot be used
     */
    public function inspect(string $name): array
    {
        return \RedisLock::inspect($name, $this->sealed->get('servers'), ['prefix' => $this->prefix] + $this->sealed->get('options'));
    }

    /**
     * The checkup of every server under the lock $name:
     * `RedisLock::diagnose()` with the store's servers and options.
     *
     * @return list<array<string, mixed>>
     */
    public function diagnose(string $name): array
    {
        return \RedisLock::diagnose($name, $this->sealed->get('servers'), ['prefix' => $this->prefix] + $this->sealed->get('options'));
    }

    /**
     * The database.redis connection of the locks, or null when the store
     * was given `servers`.
     */
    public function getConnectionName(): ?string
    {
        return $this->connection;
    }

    /**
     * Retrieves an item from the entry store.
     *
     * @param  string|array  $key
     * @return mixed
     *
     * @throws \LogicException without a `store`
     */
    public function get($key)
    {
        return $this->entries()->get($key);
    }

    /**
     * Retrieves several items from the entry store.
     *
     * @param  array  $keys
     * @return array
     *
     * @throws \LogicException without a `store`
     */
    public function many(array $keys)
    {
        return $this->entries()->many($keys);
    }

    /**
     * Stores an item in the entry store for $seconds.
     *
     * @param  string  $key
     * @param  mixed  $value
     * @param  int  $seconds
     * @return bool
     *
     * @throws \LogicException without a `store`
     */
    public function put($key, $value, $seconds)
    {
        return $this->entries()->put($key, $value, $seconds);
    }

    /**
     * Stores an item in the entry store unless it is there, atomically
     * when that store can (Laravel's redis, database, file, memcached and
     * DynamoDB stores have add()): Laravel's repository calls this when it
     * exists, else it falls back to a get and a put, two steps another
     * process can come between. The scheduler's `withoutOverlapping()` and
     * `onOneServer()` mutexes are such adds.
     *
     * @param  string  $key
     * @param  mixed  $value
     * @param  int  $seconds
     * @return bool true when it was added
     *
     * @throws \LogicException without a `store`
     */
    public function add($key, $value, $seconds)
    {
        $store = $this->entries();
        if (method_exists($store, 'add')) {
            return $store->add($key, $value, $seconds);
        }

        return $store->get($key) === null && $store->put($key, $value, $seconds);
    }

    /**
     * Stores several items in the entry store for $seconds.
     *
     * @param  array  $values
     * @param  int  $seconds
     * @return bool
     *
     * @throws \LogicException without a `store`
     */
    public function putMany(array $values, $seconds)
    {
        return $this->entries()->putMany($values, $seconds);
    }

    /**
     * Increments an item of the entry store.
     *
     * @param  string  $key
     * @param  mixed  $value
     * @return int|bool
     *
     * @throws \LogicException without a `store`
     */
    public function increment($key, $value = 1)
    {
        return $this->entries()->increment($key, $value);
    }

    /**
     * Decrements an item of the entry store.
     *
     * @param  string  $key
     * @param  mixed  $value
     * @return int|bool
     *
     * @throws \LogicException without a `store`
     */
    public function decrement($key, $value = 1)
    {
        return $this->entries()->decrement($key, $value);
    }

    /**
     * Stores an item in the entry store without expiry.
     *
     * @param  string  $key
     * @param  mixed  $value
     * @return bool
     *
     * @throws \LogicException without a `store`
     */
    public function forever($key, $value)
    {
        return $this->entries()->forever($key, $value);
    }

    /**
     * Sets a new expiry on an item of the entry store (Laravel 11+'s
     * Store::touch(); emulated with get + put on older stores).
     *
     * @param  string  $key
     * @param  int  $seconds
     * @return bool
     *
     * @throws \LogicException without a `store`
     */
    public function touch($key, $seconds)
    {
        $store = $this->entries();
        if (method_exists($store, 'touch')) {
            return $store->touch($key, $seconds);
        }
        $value = $store->get($key);

        return $value !== null && $store->put($key, $value, $seconds);
    }

    /**
     * Removes an item from the entry store.
     *
     * @param  string  $key
     * @return bool
     *
     * @throws \LogicException without a `store`
     */
    public function forget($key)
    {
        return $this->entries()->forget($key);
    }

    /**
     * Flushes the entry store (all of it: it is another store). Locks are
     * not touched.
     *
     * @return bool
     *
     * @throws \LogicException without a `store`
     */
    public function flush()
    {
        return $this->entries()->flush();
    }

    /**
     * The name of the store that keeps cache entries, or null.
     */
    public function getEntryStoreName(): ?string
    {
        return $this->entryStoreName;
    }

    /**
     * What var_dump() shows: prefix, entry store, servers and options, with
     * passwords and owners masked by the extension's own rules.
     *
     * @return array<string, mixed>
     */
    public function __debugInfo(): array
    {
        $options = $this->sealed->get('options');

        return [
            'prefix' => $this->prefix,
            'connection' => $this->connection,
            'store' => $this->entryStoreName,
            'servers' => Masked::servers($this->sealed->get('servers'), $options),
            'options' => Masked::options($options),
            'autoRenewTtl' => $this->autoRenewTtl,
        ];
    }

    /**
     * The store that keeps this store's cache entries, asked of the cache
     * manager each time (it keeps its stores): a property holding it would
     * show its Redis connection, password included, in var_export().
     *
     * @throws \LogicException when the config names none, or names a redislock store
     */
    private function entries(): Store
    {
        if ($this->entryStoreName === null) {
            throw new \LogicException(
                'The redislock cache store keeps locks only: set its "store" config key to the name of '
                . 'another cache store (e.g. \'store\' => \'redis\') to keep cache entries there.'
            );
        }
        $cache = $this->sealed->get('cache')?->get();
        if (!$cache instanceof CacheFactory) {
            throw new \LogicException('The redislock cache store has no cache manager (any more) to resolve its "store" ['
                . $this->entryStoreName . '] with.');
        }
        $repository = $cache->store($this->entryStoreName);
        $store = $repository instanceof CacheRepository && method_exists($repository, 'getStore')
            ? $repository->getStore()
            : $repository;
        if (!$store instanceof Store) {
            throw new \LogicException('The "store" [' . $this->entryStoreName . '] of the redislock cache store is not a cache store.');
        }
        if ($store instanceof self) {
            throw new \LogicException('The "store" [' . $this->entryStoreName . '] of a redislock cache store must use '
                . 'another driver than redislock.');
        }

        return $store;
    }
}

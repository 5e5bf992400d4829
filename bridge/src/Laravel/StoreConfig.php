<?php

namespace RedisLock\Bridge\Laravel;

use RedisLock\Bridge\LockLog;
use RedisLock\Bridge\OptionNames;

/**
 * Reads and checks the configuration of a `redislock` cache store, so that
 * a mistake fails when the store is built, not at its first lock: an
 * unknown key or RedisLock option is an `\InvalidArgumentException` naming
 * it and the nearest valid name, and so is an option value that the
 * extension refuses (each option is checked by the extension itself: a
 * RedisLock object is built and dropped; nothing is sent to Redis).
 *
 * @internal
 */
final class StoreConfig
{
    /**
     * The keys a store's config may have: the bridge's, plus what Laravel
     * itself puts there (`driver`; `store`, `name` and `events` in Laravel 11+).
     */
    public const KEYS = ['driver', 'connection', 'lock_connection', 'servers', 'options', 'prefix', 'store', 'auto_renew_ttl', 'events', 'name'];

    /**
     * RedisLock options the bridge sets on every lock of the store, with
     * what to use instead: given in `options` they would be dropped, so
     * they are refused.
     */
    private const SET_BY_THE_BRIDGE = [
        'prefix' => 'the locks\' key prefix is the store\'s own "prefix" key (with "connection", after the connection\'s prefix)',
        'owner' => 'the owner is each lock\'s own: Cache::lock($name, $seconds, $owner) or restoreLock($name, $owner)',
        'reentrant' => 'the store\'s locks are never reentrant: two locks on one name exclude each other, in one process too, as Laravel\'s own',
        'auto_release' => 'the store\'s locks outlive their object (Laravel\'s contract: release() or the lease ends them)',
    ];

    /**
     * @param  array<mixed>  $config  the store's config
     * @param  string  $defaultPrefix  the application's cache.prefix
     * @param  array<string, mixed>|null  $redis  the application's database.redis (for `connection`)
     * @return array{servers: string|array<int, string>|null, options: array<string, mixed>, prefix: string,
     *               connection: ?string, store: ?string, auto_renew_ttl: float, log_wait_over: ?float}
     *
     * @throws \InvalidArgumentException naming the key or option at fault
     */
    public static function read(#[\SensitiveParameter] array $config, string $defaultPrefix, #[\SensitiveParameter] ?array $redis): array
    {
        foreach (array_keys($config) as $key) {
            if (!in_array($key, self::KEYS, true)) {
                throw self::error(sprintf('unknown key "%s"%s', $key, self::hint((string) $key, self::KEYS, 'valid keys')));
            }
        }
        $options = $config['options'] ?? [];
        if (!is_array($options)) {
            throw self::error('"options" must be an array of RedisLock options');
        }
        // The bridge's own option (not the extension's): taken out here.
        $waitOver = LockLog::waitOver($options, \InvalidArgumentException::class, 'redislock cache store');
        $options = OptionNames::withoutBridge($options);
        foreach (self::SET_BY_THE_BRIDGE as $option => $instead) {
            if (array_key_exists($option, $options)) {
                throw self::error(sprintf('option "%s" cannot be set in "options": %s', $option, $instead));
            }
        }
        $prefix = $config['prefix'] ?? $defaultPrefix;
        if (!is_string($prefix)) {
            throw self::error('"prefix" must be a string');
        }
        foreach (['connection', 'lock_connection'] as $key) {
            if (isset($config[$key]) && (!is_string($config[$key]) || $config[$key] === '')) {
                throw self::error(sprintf('"%s" must name a connection of database.redis', $key));
            }
        }
        // As Laravel's redis store: locks go to lock_connection, else connection.
        $connection = $config['lock_connection'] ?? $config['connection'] ?? null;
        $servers = $config['servers'] ?? null;
        if ($connection !== null) {
            [$servers, $options, $prefix] = self::fromConnection($servers, $options, $prefix, $redis, $connection);
        } elseif (!is_string($servers) && !is_array($servers) && $servers !== null) {
            throw self::error('"servers" must be a URL, a list of URLs or null');
        }
        $store = $config['store'] ?? null;
        if ($store !== null && (!is_string($store) || $store === '')) {
            throw self::error('"store" must name a cache store');
        }
        $ttl = $config['auto_renew_ttl'] ?? RedisLockLock::AUTO_RENEW_TTL;
        if (!is_numeric($ttl) || !is_finite((float) $ttl) || (float) $ttl <= 0) {
            throw self::error('"auto_renew_ttl" must be a number of seconds greater than 0');
        }
        self::checkOptions($options);

        return [
            'servers' => $servers,
            'options' => $options,
            'prefix' => $prefix,
            'connection' => $connection,
            'store' => $store,
            'auto_renew_ttl' => (float) $ttl,
            'log_wait_over' => $waitOver,
        ];
    }

    /**
     * The nearest of $names to $name (levenshtein), when it is near enough
     * to be a typo: ` (did you mean "x"?)`; else the list of $names.
     *
     * @param  non-empty-list<string>  $names
     */
    public static function hint(string $name, array $names, string $what): string
    {
        [$best, $distance] = OptionNames::nearest($name, $names);
        if ($distance <= max(2, intdiv(strlen($name), 2))) {
            return sprintf(' (did you mean "%s"?)', $best);
        }

        return sprintf(' (%s: %s)', $what, implode(', ', $names));
    }

    /**
     * Servers, options and key prefix of a store on a database.redis
     * connection: Laravel's redis store's key is the connection's prefix,
     * the cache prefix, `:` and the name.
     *
     * @param  array<string, mixed>  $options
     * @param  array<string, mixed>|null  $redis
     * @return array{0: string, 1: array<string, mixed>, 2: string}
     */
    private static function fromConnection(
        #[\SensitiveParameter] mixed $servers,
        #[\SensitiveParameter] array $options,
        string $prefix,
        #[\SensitiveParameter] ?array $redis,
        string $connection,
    ): array {
        if ($servers !== null) {
            throw self::error('set either "connection" (a database.redis connection) or "servers" (Redis URLs), not both');
        }
        foreach (['cluster', 'sentinel'] as $option) {
            if (!empty($options[$option])) {
                throw self::error(sprintf('the option "%s" does not go with "connection" (one Redis server); use "servers"', $option));
            }
        }
        if ($redis === null) {
            throw self::error('"connection" needs the application\'s database.redis configuration');
        }
        $resolved = RedisConnection::resolve($redis, $connection);
        // Laravel's RedisStore::setPrefix(): a non-empty cache prefix gets a ':'.
        $prefix = $resolved['prefix'] . (empty($prefix) ? '' : $prefix . ':');

        return [$resolved['url'], $options + $resolved['options'], $prefix];
    }

    /**
     * Lets the extension check each option alone (on a placeholder server;
     * nothing is sent): an unknown name, or a value the option never takes,
     * is refused here. The servers, and options that only clash with each
     * other (`sentinel_password` without `sentinel`, ...), are checked at
     * the first lock, as before.
     *
     * @param  array<mixed>  $options
     *
     * @throws \InvalidArgumentException with the extension's message
     */
    private static function checkOptions(#[\SensitiveParameter] array $options): void
    {
        foreach ($options as $name => $value) {
            if (!is_string($name)) {
                throw self::error(sprintf('unknown option "%s" in "options"%s', $name, self::hint((string) $name, self::optionNames(), 'options')));
            }
            try {
                new \RedisLock('probe', 1.0, 'redis://127.0.0.1', [$name => $value]);
            } catch (\ValueError|\TypeError $e) {
                // The extension's messages never show a password.
                $message = $e->getMessage();
                if (preg_match('/unknown option "[^"]*"/', $message)) {
                    throw self::error(sprintf('unknown option "%s" in "options"%s', $name, self::hint($name, self::optionNames(), 'options')), $e);
                }
                if (str_contains($message, sprintf('option "%s"', $name))) {
                    throw self::error(sprintf('bad value of option "%s": %s', $name, $message), $e);
                }
            }
        }
    }

    /**
     * The names `options` may have: the extension's and the bridge's own.
     *
     * @return non-empty-list<string>
     */
    private static function optionNames(): array
    {
        return [...OptionNames::all(), ...OptionNames::BRIDGE];
    }

    private static function error(string $message, ?\Throwable $previous = null): \InvalidArgumentException
    {
        return new \InvalidArgumentException('redislock cache store: ' . $message, 0, $previous);
    }
}

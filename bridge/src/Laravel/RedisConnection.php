<?php

namespace RedisLock\Bridge\Laravel;

use Illuminate\Support\ConfigurationUrlParser;

/**
 * A Laravel Redis connection (`config('database.redis.NAME')`) as the
 * redislock extension takes it: the server URL, the key prefix that
 * Laravel's client puts before every key, and the TLS options of its
 * stream context. Read as Laravel's `RedisManager` and its connectors read
 * it:
 *
 * - `url` (parsed by Laravel's own ConfigurationUrlParser: `redis://`,
 *   `rediss://`, `tls://`), `host` (also `tls://host`, or a socket path),
 *   `port` (6379), `username` and `password` (AUTH when the password is not
 *   empty), `database`, `scheme` (`tls`/`rediss` for TLS, `unix` with
 *   `path`);
 * - the prefix: phpredis (`database.redis.client`, the default) uses
 *   `prefix` of the connection merged with `database.redis.options` and the
 *   connection's own `options` (the last wins), when not empty; Predis uses
 *   the connection's `prefix`, else `prefix` of the options;
 * - `context` (phpredis, `['stream' => [...]]` or the stream options
 *   themselves) and `ssl` (Predis): `verify_peer => false` gives
 *   `tls_verify => false`, `cafile` `tls_ca`, `local_cert` `tls_cert`,
 *   `local_pk` `tls_key` (`local_cert` alone: both, one PEM file).
 *
 * Not read: timeouts, `persistent`, Predis' `parameters` option. Cluster
 * connections (`database.redis.clusters`) are refused: the extension puts
 * every key of a lock in one hash slot (a hash tag), so its keys would not
 * be Laravel's.
 *
 * @internal
 */
final class RedisConnection
{
    /** Keys of `database.redis` that are not connections. */
    private const NOT_CONNECTIONS = ['client', 'options', 'clusters'];

    /** Stream context options of TLS and the RedisLock options they become. */
    private const TLS_OPTIONS = ['cafile' => 'tls_ca', 'local_cert' => 'tls_cert', 'local_pk' => 'tls_key'];

    /**
     * @param  array<string, mixed>  $redis  the application's `database.redis` configuration
     * @param  string  $name  a connection name in it (e.g. `default`)
     * @return array{url: string, prefix: string, options: array<string, mixed>}
     *
     * @throws \InvalidArgumentException when there is no such connection, or it is a cluster
     */
    public static function resolve(#[\SensitiveParameter] array $redis, string $name): array
    {
        $connection = in_array($name, self::NOT_CONNECTIONS, true) ? null : ($redis[$name] ?? null);
        if ($connection === null && isset($redis['clusters'][$name])) {
            throw self::error(sprintf(
                'the Redis connection "%s" is a cluster (database.redis.clusters): the extension keeps a lock\'s keys in '
                . 'one hash slot, so it cannot lock Laravel\'s keys there; use "servers" with the option cluster => true',
                $name,
            ));
        }
        if (!is_array($connection) && !is_string($connection)) {
            $names = array_diff(array_keys($redis), self::NOT_CONNECTIONS);
            throw self::error(sprintf(
                'the Redis connection "%s" is not configured in database.redis (connections: %s)',
                $name,
                $names === [] ? 'none' : implode(', ', $names),
            ));
        }
        $connection = self::parse($connection);
        $global = is_array($redis['options'] ?? null) ? $redis['options'] : [];

        return [
            'url' => self::url($connection, $name),
            'prefix' => self::prefix($connection, $global, strtolower((string) ($redis['client'] ?? 'phpredis'))),
            'options' => self::tlsOptions($connection),
        ];
    }

    /**
     * The connection with its `url` parsed, as RedisManager parses it.
     *
     * @param  array<string, mixed>|string  $connection
     * @return array<string, mixed>
     */
    private static function parse(#[\SensitiveParameter] array|string $connection): array
    {
        $parsed = (new ConfigurationUrlParser())->parseConfiguration($connection);
        $driver = strtolower((string) ($parsed['driver'] ?? ''));
        if (in_array($driver, ['tcp', 'tls'], true)) {
            $parsed['scheme'] = $driver;
        }

        return $parsed;
    }

    /**
     * The server URL: `redis://`, `rediss://` or `unix://`, credentials
     * URL-encoded.
     *
     * @param  array<string, mixed>  $c
     */
    private static function url(#[\SensitiveParameter] array $c, string $name): string
    {
        $scheme = strtolower((string) ($c['scheme'] ?? ''));
        $host = (string) ($c['host'] ?? '127.0.0.1');
        if (preg_match('#^(tls|ssl|rediss|tcp|redis|unix)://#i', $host, $m)) {
            $scheme = $scheme === '' || $scheme === 'tcp' ? strtolower($m[1]) : $scheme;
            $host = substr($host, strlen($m[0]));
        }
        $password = isset($c['password']) ? (string) $c['password'] : '';
        $user = $password !== '' && isset($c['username']) ? (string) $c['username'] : '';
        $db = isset($c['database']) && $c['database'] !== '' ? self::number($c['database'], 'database', $name, 0, PHP_INT_MAX) : null;

        if ($scheme === 'unix' || str_starts_with($host, '/')) {
            $path = (string) ($c['path'] ?? $host);
            $query = array_filter(
                ['db' => $db, 'user' => $user, 'password' => $password],
                static fn ($v) => $v !== null && $v !== '',
            );

            return 'unix://' . implode('/', array_map('rawurlencode', explode('/', $path)))
                . ($query === [] ? '' : '?' . http_build_query($query, '', '&', PHP_QUERY_RFC3986));
        }
        $tls = in_array($scheme, ['tls', 'ssl', 'rediss'], true);
        if (str_contains($host, ':') && !str_starts_with($host, '[')) {
            $host = "[$host]";  // IPv6
        }
        $port = isset($c['port']) && $c['port'] !== '' ? self::number($c['port'], 'port', $name, 1, 65535) : 6379;
        $auth = $password === '' ? '' : rawurlencode($user) . ':' . rawurlencode($password) . '@';

        return ($tls ? 'rediss' : 'redis') . "://{$auth}{$host}:{$port}" . ($db === null ? '' : "/$db");
    }

    /**
     * A whole number of the connection (an int, or a string of digits, as
     * the environment gives it) from $min to $max; anything else is named
     * as given, not as a number it never was.
     *
     * @throws \InvalidArgumentException
     */
    private static function number(mixed $value, string $key, string $name, int $min, int $max): int
    {
        if (is_int($value) || (is_string($value) && preg_match('/^\d{1,18}$/', $value))) {
            if ((int) $value >= $min && (int) $value <= $max) {
                return (int) $value;
            }
        }
        $given = is_scalar($value) ? var_export(is_string($value) ? substr($value, 0, 40) : $value, true) : get_debug_type($value);
        throw self::error(sprintf('the Redis connection "%s": "%s" must be a whole number from %d to %d, %s given', $name, $key, $min, $max, $given));
    }

    /**
     * The prefix Laravel's client puts before every key of the connection.
     *
     * @param  array<string, mixed>  $connection
     * @param  array<string, mixed>  $global  database.redis.options
     */
    private static function prefix(array $connection, array $global, string $client): string
    {
        $own = is_array($connection['options'] ?? null) ? $connection['options'] : [];
        if ($client === 'predis') {
            // PredisConnector: the connection's prefix, else the merged options'.
            $prefix = $connection['prefix'] ?? array_merge($global, $own)['prefix'] ?? null;

            return is_scalar($prefix) ? (string) $prefix : '';
        }
        // PhpRedisConnector: array_merge($config, $options, $config['options']), set when !empty.
        $prefix = array_merge($connection, $global, $own)['prefix'] ?? null;

        return !empty($prefix) && is_scalar($prefix) ? (string) $prefix : '';
    }

    /**
     * RedisLock TLS options from the connection's stream context.
     *
     * @param  array<string, mixed>  $c
     * @return array<string, mixed>
     */
    private static function tlsOptions(#[\SensitiveParameter] array $c): array
    {
        $context = $c['context'] ?? $c['ssl'] ?? [];
        $context = is_array($context) && is_array($context['stream'] ?? null) ? $context['stream'] : $context;
        if (!is_array($context)) {
            return [];
        }
        $options = [];
        if (($context['verify_peer'] ?? true) === false) {
            $options['tls_verify'] = false;
        }
        foreach (self::TLS_OPTIONS as $stream => $option) {
            if (is_string($context[$stream] ?? null) && $context[$stream] !== '') {
                $options[$option] = $context[$stream];
            }
        }
        if (isset($options['tls_cert']) && !isset($options['tls_key'])) {
            $options['tls_key'] = $options['tls_cert'];  // local_cert alone: one PEM file with both
        }

        return $options;
    }

    private static function error(string $message): \InvalidArgumentException
    {
        return new \InvalidArgumentException('redislock cache store: ' . $message);
    }
}

<?php

namespace RedisLock\Bridge\Console;

/**
 * The locks of a set of servers, with the constructor's options (prefix,
 * cluster, sentinel, TLS, ...), as `new RedisLock($name, ..., $servers,
 * $options)` sees them. The servers and options (passwords) are kept in
 * no property: var_dump, var_export, casts, json_encode and serialize of
 * this object show nothing of them.
 */
final class ServerTarget implements Target
{
    /** @var \WeakMap<self, array{0: string|array<int, string>|null, 1: array<string, mixed>}>|null */
    private static ?\WeakMap $config = null;

    /**
     * @param  string|array<int, string>|null  $servers  a URL or a list; null: ini redislock.servers
     * @param  array<string, mixed>  $options  RedisLock options
     */
    public function __construct(#[\SensitiveParameter] string|array|null $servers = null, #[\SensitiveParameter] array $options = [])
    {
        self::$config ??= new \WeakMap();
        self::$config[$this] = [$servers, $options];
    }

    public function inspect(string $name): array
    {
        [$servers, $options] = self::$config[$this];
        return \RedisLock::inspect($name, $servers, $options);
    }

    public function forceRelease(string $name): bool
    {
        [$servers, $options] = self::$config[$this];
        return (new \RedisLock($name, 1.0, $servers, $options))->forceRelease();
    }

    /** @return array<string, mixed> the servers as the extension shows them (passwords masked) */
    public function __debugInfo(): array
    {
        [$servers, $options] = self::$config[$this];
        return ['servers' => \RedisLock\Bridge\Masked::servers($servers, $options)];
    }

    /** @return never */
    public function __serialize(): array
    {
        throw new \LogicException('Cannot serialize ' . self::class . ': it holds Redis credentials');
    }

    private function __clone()
    {
    }
}

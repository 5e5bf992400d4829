<?php

namespace RedisLock\Bridge\Console;

use RedisLock\Bridge\Masked;
use RedisLock\Bridge\Sealed;

/**
 * The locks of a set of servers, with the constructor's options (prefix,
 * cluster, sentinel, TLS, ...), as `new RedisLock($name, ..., $servers,
 * $options)` sees them. The servers and options (passwords) are kept in
 * a {@see Sealed}: var_export, casts and json_encode of this object show
 * nothing of them, var_dump the masked servers; serialize() is refused.
 */
final class ServerTarget implements Target
{
    /** The servers and options (they may carry a password). */
    private Sealed $sealed;

    /**
     * @param  string|array<int, string>|null  $servers  a URL or a list; null: ini redislock.servers
     * @param  array<string, mixed>  $options  RedisLock options
     */
    public function __construct(#[\SensitiveParameter] string|array|null $servers = null, #[\SensitiveParameter] array $options = [])
    {
        $this->sealed = new Sealed(['servers' => $servers, 'options' => $options]);
    }

    public function inspect(string $name): array
    {
        return \RedisLock::inspect($name, $this->sealed->get('servers'), $this->sealed->get('options') ?? []);
    }

    public function diagnose(string $name): array
    {
        return \RedisLock::diagnose($name, $this->sealed->get('servers'), $this->sealed->get('options') ?? []);
    }

    public function forceRelease(string $name): bool
    {
        return (new \RedisLock($name, 1.0, $this->sealed->get('servers'), $this->sealed->get('options') ?? []))->forceRelease();
    }

    /** @return array<string, mixed> the servers as the extension shows them (passwords masked) */
    public function __debugInfo(): array
    {
        return ['servers' => Masked::servers($this->sealed->get('servers'), $this->sealed->get('options') ?? [])];
    }
}

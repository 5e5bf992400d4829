<?php

namespace RedisLock\Bridge\Symfony;

use RedisLock\Bridge\Masked;

/**
 * @internal a store's servers and options, kept where no dump reaches them
 *
 * The values live in a private static WeakMap keyed by this object, not
 * in a property of it: var_export(), an (array) cast (what Symfony's
 * VarDumper reads), json_encode() and serialize() of a store (or of a
 * LockFactory, Lock or Semaphore holding one) find an object without
 * properties. var_dump() and print_r() show the masked servers
 * ({@see Masked}); serialize() is refused. A clone of a store shares its
 * StoreConfig, so it keeps the same servers and options.
 */
final class StoreConfig
{
    /** @var \WeakMap<self, array{servers: string|array<int, string>|null, options: array<string, mixed>}>|null */
    private static ?\WeakMap $values = null;

    /**
     * @param string|array<int, string>|null $servers as for `new RedisLock()`; null: ini redislock.servers
     * @param array<string, mixed>            $options the extension's options
     */
    public function __construct(
        #[\SensitiveParameter] string|array|null $servers,
        #[\SensitiveParameter] array $options,
    ) {
        self::$values ??= new \WeakMap();
        self::$values[$this] = ['servers' => $servers, 'options' => $options];
    }

    /** @return string|array<int, string>|null the servers as given */
    public function servers(): string|array|null
    {
        return self::$values[$this]['servers'];
    }

    /** @return array<string, mixed> the options as given */
    public function options(): array
    {
        return self::$values[$this]['options'];
    }

    /**
     * What var_dump() and print_r() show: the servers masked by the
     * extension's own rules, secret options replaced by `***`.
     *
     * @return array<string, mixed>
     */
    public function __debugInfo(): array
    {
        return [
            'servers' => Masked::servers($this->servers(), $this->options()),
            'options' => Masked::options($this->options()),
        ];
    }

    /**
     * Refused: a serialized copy would carry the password.
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

    /** A copy would have no values: stores share their StoreConfig instead. */
    private function __clone()
    {
    }
}

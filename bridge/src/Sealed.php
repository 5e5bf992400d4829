<?php

namespace RedisLock\Bridge;

/**
 * Values that may carry a secret (server URLs with passwords, options
 * such as `sentinel_password`), kept out of every property.
 *
 * `var_export()` and `(array)` casts read an object's properties and
 * ignore `__debugInfo()`, so the bridge objects keep their servers and
 * options here instead: a Sealed object has no properties; its values
 * live in a private static WeakMap keyed by it, and go with it. A bridge
 * object holds one Sealed object, which a `clone` of that object shares
 * (the values never change). Sealed objects cannot be cloned, serialized
 * or unserialized.
 *
 * @internal
 */
final class Sealed
{
    /** @var \WeakMap<self, array<string, mixed>>|null */
    private static ?\WeakMap $values = null;

    /**
     * @param  array<string, mixed>  $values  e.g. ['servers' => ..., 'options' => [...]]
     */
    public function __construct(#[\SensitiveParameter] array $values)
    {
        self::$values ??= new \WeakMap();
        self::$values[$this] = $values;
    }

    /**
     * One of the values (null when it was not given).
     *
     * @return mixed
     */
    public function get(string $name): mixed
    {
        return self::$values[$this][$name] ?? null;
    }

    /**
     * What var_dump() and print_r() show: nothing of the values.
     *
     * @return array<string, string>
     */
    public function __debugInfo(): array
    {
        return ['values' => '***'];
    }

    /**
     * Refused: the values would be written out in clear.
     *
     * @throws \LogicException always
     */
    public function __serialize(): array
    {
        throw new \LogicException('The redislock bridge\'s sealed configuration cannot be serialized (it may hold a password).');
    }

    /**
     * Refused: a Sealed object is made only from a configuration.
     *
     * @param  array<mixed>  $data
     *
     * @throws \LogicException always
     */
    public function __unserialize(array $data): void
    {
        throw new \LogicException('The redislock bridge\'s sealed configuration cannot be unserialized.');
    }

    /** Refused: a clone would have no values (they are keyed by the object). */
    private function __clone()
    {
    }
}

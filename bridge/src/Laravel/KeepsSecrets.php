<?php

namespace RedisLock\Bridge\Laravel;

/**
 * For the bridge objects that hold Redis servers and options (in a
 * {@see \RedisLock\Bridge\Sealed}): `json_encode()` gives what `var_dump()` shows (the
 * masked `__debugInfo()`), and `serialize()` / `unserialize()` are
 * refused with a `\LogicException` that says what to keep instead.
 *
 * @internal
 */
trait KeepsSecrets
{
    /**
     * What json_encode() writes: the masked view of __debugInfo().
     *
     * @return array<string, mixed>
     */
    public function jsonSerialize(): array
    {
        return $this->__debugInfo();
    }

    /**
     * Refused: the servers and options may hold a password.
     *
     * @throws \LogicException always
     */
    public function __serialize(): array
    {
        throw new \LogicException(sprintf(
            '%s cannot be serialized: it holds the Redis servers and options, which may carry a password. '
            . 'Keep what rebuilds it instead (the store\'s name; a lock\'s name and owner(), for Cache::restoreLock()).',
            static::class,
        ));
    }

    /**
     * Refused, as serialize() is.
     *
     * @param  array<mixed>  $data
     *
     * @throws \LogicException always
     */
    public function __unserialize(array $data): void
    {
        throw new \LogicException(sprintf('%s cannot be unserialized: build it from the cache configuration.', static::class));
    }
}

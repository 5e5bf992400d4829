<?php

namespace RedisLock\Bridge\Console;

/**
 * What the command line looks at and acts on: the locks of some servers
 * (ServerTarget: `--servers`, or a framework's configuration) or of a
 * Laravel store (Laravel\ConsoleTarget).
 */
interface Target
{
    /**
     * What Redis knows of the lock $name: `RedisLock::inspect()`'s array.
     *
     * @return array<string, mixed>
     * @throws \RedisLock\LockException when Redis cannot be used
     */
    public function inspect(string $name): array;

    /**
     * Deletes the lock $name whoever holds it.
     *
     * @return bool true when a lock was deleted
     * @throws \RedisLock\LockException when Redis cannot be used
     */
    public function forceRelease(string $name): bool;

    /**
     * The checkup of every server under the lock $name:
     * `RedisLock::diagnose()`'s list.
     *
     * @return list<array<string, mixed>>
     * @throws \RedisLock\LockException when the servers cannot be found
     */
    public function diagnose(string $name): array;
}

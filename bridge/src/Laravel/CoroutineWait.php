<?php

declare(strict_types=1);

namespace RedisLock\Bridge\Laravel;

/**
 * Waiting for a lock or a funnel slot inside a Swoole (or OpenSwoole)
 * coroutine. The extension refuses a wait there with a LockException: it
 * waits on its own socket, which Swoole's hooks do not make cooperative,
 * so every coroutine of the worker would stall. Inside a coroutine this
 * tries once every 50 ms and yields with Coroutine::sleep() in between
 * (Laravel's own block() polls every 250 ms); outside one it is the
 * extension's wait, woken by the release.
 *
 * Detected by Swoole's own API: Coroutine::getCid() is above 0 inside a
 * coroutine and -1 outside (the class is looked up without autoloading).
 */
final class CoroutineWait
{
    /** How often a coroutine tries again, in seconds. */
    public const INTERVAL = 0.05;

    /**
     * $acquire($wait) outside coroutines; inside one, $acquire(0.0) until
     * it returns true or $wait seconds have passed.
     *
     * @param callable(float): bool $acquire
     */
    public static function acquire(callable $acquire, float $wait): bool
    {
        $coroutine = self::coroutineClass();
        if ($coroutine === null || $wait <= 0.0) {
            return $acquire($wait);
        }
        $deadline = microtime(true) + $wait;
        while (!$acquire(0.0)) {
            $left = $deadline - microtime(true);
            if ($left <= 0.0) {
                return false;
            }
            $coroutine::sleep(min(self::INTERVAL, $left));
        }
        return true;
    }

    /** The coroutine class whose getCid() says we run inside one, or null. */
    public static function coroutineClass(): ?string
    {
        foreach (['Swoole\\Coroutine', 'OpenSwoole\\Coroutine'] as $class) {
            if (class_exists($class, false) && $class::getCid() > 0) {
                return $class;
            }
        }
        return null;
    }
}

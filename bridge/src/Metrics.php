<?php

declare(strict_types=1);

namespace RedisLock\Bridge;

/**
 * The extension's Prometheus exposition (`RedisLock::metrics()`), as the
 * bridges' metrics routes and the command line serve it.
 *
 * Under PHP-FPM the figures are the pool's (every worker forked from the
 * master, surviving worker recycling; ini `redislock.stats = pool`); a
 * command line process is a pool of its own, so it shows only what it
 * did itself: point `redislock metrics --url=...` at the route instead.
 */
final class Metrics
{
    /** The Content-Type of Prometheus's text format, version 0.0.4. */
    public const CONTENT_TYPE = 'text/plain; version=0.0.4; charset=utf-8';

    /** Whether the loaded extension has `RedisLock::metrics()`. */
    public static function available(): bool
    {
        return class_exists(\RedisLock::class, false) && method_exists(\RedisLock::class, 'metrics');
    }

    /**
     * `RedisLock::metrics()`.
     *
     * @throws \LogicException when the loaded extension has no `RedisLock::metrics()`
     */
    public static function exposition(): string
    {
        if (!self::available()) {
            throw new \LogicException(sprintf(
                'the loaded redislock extension (%s) has no RedisLock::metrics(): update it to a version with metrics',
                phpversion('redislock') ?: 'not loaded',
            ));
        }

        return (string) \RedisLock::metrics();
    }

    /**
     * What the bridges' metrics routes answer, as the arguments of an HTTP
     * response (Symfony's, or Laravel's, which extends it): the exposition,
     * 200, not cached; or a 501 with a plain message when the loaded
     * extension has no `RedisLock::metrics()`.
     *
     * @return array{0: string, 1: int, 2: array<string, string>} body, status, headers
     */
    public static function response(): array
    {
        $headers = ['Content-Type' => self::CONTENT_TYPE, 'Cache-Control' => 'no-store'];
        try {
            return [self::exposition(), 200, $headers];
        } catch (\LogicException $e) {
            return ['redislock: ' . $e->getMessage() . "\n", 501, ['Content-Type' => 'text/plain; charset=utf-8'] + $headers];
        }
    }
}

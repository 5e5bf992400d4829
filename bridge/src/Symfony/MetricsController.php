<?php

declare(strict_types=1);

namespace RedisLock\Bridge\Symfony;

use RedisLock\Bridge\Metrics;
use Symfony\Component\HttpFoundation\Response;

/**
 * An invokable controller: `RedisLock::metrics()`, the figures of the
 * PHP-FPM pool that serves the request, in Prometheus's text format
 * (`text/plain; version=0.0.4`), not cached; a 501 with a plain message
 * when the loaded extension has no metrics (an older version).
 *
 * The bundle registers it with `redislock: { metrics: true }`; a route
 * of the application points at it (config/routes/redislock.yaml):
 *
 *     redislock_metrics:
 *         path: /redislock/metrics
 *         controller: RedisLock\Bridge\Symfony\MetricsController
 *         methods: [GET]
 *
 * The figures show lock names (the hottest ones): keep the path behind
 * the firewall (`access_control`) when they are not public.
 */
final class MetricsController
{
    /** The exposition, or a 501 without it. */
    public function __invoke(): Response
    {
        return new Response(...Metrics::response());
    }
}

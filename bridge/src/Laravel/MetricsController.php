<?php

declare(strict_types=1);

namespace RedisLock\Bridge\Laravel;

use Illuminate\Http\Response;
use RedisLock\Bridge\Metrics;

/**
 * The metrics route of the Laravel provider (`redislock.metrics.route`):
 * `RedisLock::metrics()`, the figures of the PHP-FPM pool that serves the
 * request, in Prometheus's text format (`text/plain; version=0.0.4`), not
 * cached. A 501 with a plain message when the loaded extension has no
 * metrics (an older version).
 *
 * The figures show lock names (the hottest ones): keep the route behind
 * `redislock.metrics.middleware` (or a firewall) when they are not public.
 */
final class MetricsController
{
    /** The exposition, or a 501 without it. */
    public function __invoke(): Response
    {
        return new Response(...Metrics::response());
    }
}

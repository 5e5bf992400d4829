<?php

declare(strict_types=1);

namespace RedisLock\Bridge\Tests\Laravel\Fixtures;

use Illuminate\Http\Request;
use Illuminate\Http\Response;

/** A middleware for the metrics route's test: a 403 unless the request has `X-Metrics-Token: letmein`. */
final class RequireMetricsToken
{
    /** Passes the request on, or answers 403. */
    public function handle(Request $request, \Closure $next): mixed
    {
        return $request->header('X-Metrics-Token') === 'letmein' ? $next($request) : new Response("forbidden\n", 403);
    }
}

<?php

declare(strict_types=1);

/**
 * The extension with option starve_after (1 ms, as Go's sync.Mutex, or
 * BENCH_STARVE_AFTER seconds): a queued waiter lets whoever asks first
 * take a free lock until it has waited that long, then is handed the lock
 * in arrival order (docs/protocol.md, "Barging first").
 */
if (!class_exists('RedislockContender', false)) {
    require __DIR__ . '/redislock.php';
}

return fn (Endpoint $redis) => new RedislockContender($redis->url(), ['starve_after' => (float) (getenv('BENCH_STARVE_AFTER') ?: 0.001)]);

<?php
/*
 * Acquires the lock of the query (key, ttl, url, opts; wait = seconds to
 * wait), answers, then ends as `end` says:
 *   return  (default) returns with the lock still held
 *   release releases it first
 *   fatal   a fatal error (call to an undefined function) while holding it
 *   exit    exit() while holding it
 *   throw   an uncaught exception while holding it
 * With pid_key, the worker's pid is written there once the lock is held
 * (for a test that kills the holder); with sleep_ms, the request then
 * sleeps that long (in 10 ms steps) before it answers.
 */
require __DIR__ . '/common.inc';
$t0 = hrtime(true);
$lock = lock_from_query();
$acquired = $lock->acquire((float) param('wait', '0'));
if (param('pid_key') !== null) {
    redis_cmd(param('url'), 'SET', param('pid_key'), (string) getmypid(), 'EX', '30');
}
$end = hrtime(true) + (int) param('sleep_ms', '0') * 1_000_000;
while (hrtime(true) < $end) {
    usleep(10000);
}
switch (param('end', 'return')) {
    case 'release':
        $released = $lock->release();
        answer(['acquired' => $acquired, 'released' => $released, 'seconds' => seconds_since($t0)]);
        break;
    case 'fatal':
        answer(['acquired' => $acquired]);
        redislock_no_such_function();
        break;
    case 'exit':
        answer(['acquired' => $acquired]);
        exit(0);
    case 'throw':
        answer(['acquired' => $acquired]);
        throw new RuntimeException('uncaught while holding the lock');
    default:
        answer(['acquired' => $acquired, 'token' => $lock->token(), 'seconds' => seconds_since($t0)]);
}

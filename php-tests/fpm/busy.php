<?php
/*
 * withLock() on the lock of the query whose callback computes until
 * `seconds` have passed (default: forever, for an execution time limit).
 * It prints "in callback" first. Answers how the call ended: its result,
 * or the exception class and message, and how long it ran.
 */
require __DIR__ . '/common.inc';
$t0 = hrtime(true);
$lock = lock_from_query();
$seconds = (float) param('seconds', '-1');
try {
    $result = $lock->withLock(function (RedisLock $l) use ($seconds, $t0) {
        echo "in callback\n";
        $n = 0;
        while ($seconds < 0 || (hrtime(true) - $t0) / 1e9 < $seconds) {
            $n++;
        }
        return $n > 0 ? 'callback ran to its end' : 'no iterations';
    }, (float) param('wait', '0'));
    answer(['result' => $result, 'seconds' => seconds_since($t0), 'stats' => RedisLock::stats()]);
} catch (Throwable $e) {
    answer(['exception' => get_class($e), 'message' => $e->getMessage(), 'seconds' => seconds_since($t0),
            'token' => $lock->token(), 'stats' => RedisLock::stats()]);
}

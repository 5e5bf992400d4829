<?php
/*
 * Holds the lock of the query (give opts auto_renew) for `hold` seconds,
 * checking from a connection of its own every 50 ms that the key still
 * holds our token, and the lowest PTTL seen. Answers whether it stayed
 * ours throughout and how many renewals this worker made meanwhile; then
 * returns without releasing (auto_release decides what happens to it).
 */
require __DIR__ . '/common.inc';
$url = param('url');
$key = param('key');
$renewals0 = RedisLock::stats()['renewals'];
$lock = lock_from_query();
$acquired = $lock->acquire();
$token = $lock->token();
$ours = $acquired;
$minPttl = PHP_INT_MAX;
$checks = 0;
$t0 = hrtime(true);
while ((hrtime(true) - $t0) / 1e9 < (float) param('hold', '1')) {
    $ours = $ours && redis_cmd($url, 'GET', $key) === $token;
    $minPttl = min($minPttl, (int) redis_cmd($url, 'PTTL', $key));
    $checks++;
    usleep(50000);
}
answer(['acquired' => $acquired, 'ours_throughout' => $ours, 'min_pttl' => $minPttl, 'checks' => $checks,
        'renewals' => RedisLock::stats()['renewals'] - $renewals0, 'is_acquired' => $lock->isAcquired(),
        'token' => $token, 'stats' => RedisLock::stats()]);

<?php
/*
 * Uses every kind of connection a worker keeps to Redis, without opening
 * any of its own: a plain acquire + release (key a), a waited acquire
 * (key w: another object of this process holds it for 100 ms, so the
 * waiter blocks on its BLPOP connection until the lease ends), and an
 * auto-renewed 0.9 s hold kept until the renewal thread (with its own
 * connection) has renewed a lease of this worker (key r). Then sleeps sleep_ms, so that requests sent at once
 * land on different workers. Answers what it got and RedisLock::stats().
 */
require __DIR__ . '/common.inc';
$url = param('url');
$a = new RedisLock(param('a'), 10, $url);
$plain = $a->acquire() && $a->release();

$holder = new RedisLock(param('w'), 0.1, $url, ['reentrant' => false]);
$waiter = new RedisLock(param('w'), 10, $url, ['reentrant' => false, 'retry_delay' => 0.5]);
$t = hrtime(true);
$waited = $holder->acquire() && $waiter->acquire(3.0) && $waiter->release();
$waitedSeconds = seconds_since($t);

$r = new RedisLock(param('r'), 0.9, $url, ['auto_renew' => true]);
$renewals = RedisLock::stats()['renewals'];
$renewed = $r->acquire();
$end = hrtime(true) + 3_000_000_000;          // the first renewal comes after 0.3 s
while (RedisLock::stats()['renewals'] === $renewals && hrtime(true) < $end) {
    usleep(10000);
}
$renewed = $renewed && RedisLock::stats()['renewals'] > $renewals && $r->release();

usleep((int) param('sleep_ms', '0') * 1000);
answer(['plain' => $plain, 'waited' => $waited, 'waited_seconds' => $waitedSeconds, 'renewed' => $renewed,
        'stats' => RedisLock::stats()]);

<?php
/*
 * Uses every kind of connection a worker keeps to Redis, without opening
 * any of its own: a plain acquire + release (key a), a waited acquire
 * (key w: another object of this process holds it for 100 ms, so the
 * waiter blocks on its BLPOP connection until the lease ends; longer when
 * the waiter came too late to block), and an auto-renewed 0.9 s hold kept
 * until the renewal thread (with its own connection) has renewed a lease
 * of this worker (key r). Then sleeps sleep_ms, so that requests sent at
 * once land on different workers. Answers what it got and this worker's
 * own RedisLock::stats('process') (the pool's figures mix every worker's:
 * another worker's renewal must not end this one's wait).
 */
require __DIR__ . '/common.inc';
$url = param('url');
$a = new RedisLock(param('a'), 10, $url);
$plain = $a->acquire() && $a->release();

// A loaded machine can reach the waiter's acquire after the holder's lease
// has ended: then the waiter takes the lock at once and never blocks. It
// tries again with a longer lease until it did block (stats: contended).
$waited = false;
for ($ttl = 0.1; !$waited && $ttl <= 1.6; $ttl *= 2) {
    $holder = new RedisLock(param('w'), $ttl, $url, ['reentrant' => false]);
    $waiter = new RedisLock(param('w'), 10, $url, ['reentrant' => false, 'retry_delay' => 0.5]);
    $contended = RedisLock::stats('process')['contended'];
    $t = hrtime(true);
    $waited = $holder->acquire() && $waiter->acquire(3.0) && RedisLock::stats('process')['contended'] > $contended;
    $waitedSeconds = seconds_since($t);
    $waiter->release();
}

$r = new RedisLock(param('r'), 0.9, $url, ['auto_renew' => true]);
$renewals = RedisLock::stats('process')['renewals'];
$renewed = $r->acquire();
$end = hrtime(true) + 3_000_000_000;          // the first renewal comes after 0.3 s
while (RedisLock::stats('process')['renewals'] === $renewals && hrtime(true) < $end) {
    usleep(10000);
}
$renewed = $renewed && RedisLock::stats('process')['renewals'] > $renewals && $r->release();

usleep((int) param('sleep_ms', '0') * 1000);
answer(['plain' => $plain, 'waited' => $waited, 'waited_seconds' => $waitedSeconds, 'renewed' => $renewed,
        'stats' => RedisLock::stats('process')]);

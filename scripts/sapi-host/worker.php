<?php
/*
 * The worker script of scripts/sapi-hook-test.sh, run by sapi-host in
 * worker mode (--requests 3): like a FrankenPHP worker, it serves requests
 * in a loop of host_handle_request() inside one PHP request.
 *
 * Each request takes locks, a read hold and semaphore permits and forgets
 * them on purpose (their objects stay in $GLOBALS, so no destructor runs).
 * Between requests (output is off there, as in FrankenPHP) a connection of
 * its own looks at Redis; what it finds is printed in the next request, one
 * "ok - ..." or "not ok - ..." line per check.
 *
 * SAPI_HOOK_EXPECT=hook (SAPI name "frankenphp"): every request end
 * releases the holds and permits with auto_release on; those with it off
 * stay with their objects. SAPI_HOOK_EXPECT=none (any other SAPI name):
 * nothing is released before the worker's own end (RSHUTDOWN), as before.
 */
require dirname(__DIR__, 2) . '/php-tests/config.inc';

use RedisLock\Semaphore;

$hooked = match (getenv('SAPI_HOOK_EXPECT')) {
    'hook' => true,
    'none' => false,
    default => throw new ValueError('SAPI_HOOK_EXPECT must be hook or none'),
};
$url = redislock_test_url();
$prefix = getenv('SAPI_HOOK_PREFIX') ?: 'sapi-hook-';
$key = fn (string $name): string => $prefix . $name;
$results = [];
$check = function (bool $ok, string $what) use (&$results): void {
    $results[] = ($ok ? 'ok' : 'not ok') . " - $what";
};
$flush = function () use (&$results): void {
    foreach ($results as $line) {
        echo $line, "\n";
    }
    $results = [];
};
$held = fn (string $name): bool => redis_cmd($url, 'EXISTS', $key($name)) === 1;
$permits = fn (string $name): int => redis_cmd($url, 'ZCOUNT', $key($name) . '~~s', '(0', '+inf');
// Readers in Redis: a lone reader is the lock key itself ("~~read:<token>:<lease end>").
$readers = fn (string $name): int => str_starts_with((string) redis_cmd($url, 'GET', $key($name)), '~~read:')
    ? 1 : redis_cmd($url, 'ZCARD', $key($name) . '~~r');
$released = $hooked ? 'released' : 'still held';
$releases = fn (): int => RedisLock::stats('process')['primitives']['lock']['releases'];

ob_start();
phpinfo(INFO_MODULES);
$info = ob_get_clean();
$check(
    str_contains($info, "Request scope ends at => request shutdown, and the SAPI's deactivate") === $hooked,
    'phpinfo: the SAPI hook is ' . ($hooked ? 'installed' : 'absent') . ' (SAPI ' . PHP_SAPI . ')',
);

// The worker's start-up runs in a request of its own (FrankenPHP's dummy
// request), which ends at the first host_handle_request().
$GLOBALS['boot'] = new RedisLock($key('boot'), 30);
$check($GLOBALS['boot']->acquire(), 'start-up: lock boot taken');

$request = function (int $n) use ($check, $flush, $held, $permits, $key, $hooked, $released, $releases): void {
    $flush();
    switch ($n) {
        case 0:
            $check($held('boot') !== $hooked, "request 0: the start-up request's lock boot is $released");
            $a = new RedisLock($key('a'), 30);
            $again = new RedisLock($key('a'), 30);
            $s = new Semaphore($key('s'), 2, 30);
            $r = new RedisLock($key('r'), 30);
            $k = new RedisLock($key('k'), 30, null, ['auto_release' => false]);
            $ks = new Semaphore($key('ks'), 2, 30, null, ['auto_release' => false]);
            $check($a->acquire() && $again->acquire(), 'request 0: lock a taken twice (reentrant)');
            $check($s->acquire(), 'request 0: a permit of semaphore s taken');
            $check($r->acquireRead(), 'request 0: a read hold of lock r taken');
            $check($k->acquire(), 'request 0: lock k taken, auto_release off');
            $check($ks->acquire(), 'request 0: a permit of semaphore ks taken, auto_release off');
            $GLOBALS['forgotten'] = [$a, $again, $s, $r];
            $GLOBALS['kept'] = [$k, $ks];
            break;
        case 1:
            [$a, , $s] = $GLOBALS['forgotten'];
            [$k, $ks] = $GLOBALS['kept'];
            $check($releases() === ($hooked ? 2 : 0), 'request 1: ' . ($hooked
                ? '2 releases so far (boot, and a once although taken twice)'
                : 'no release so far') . ', ' . $releases() . ' counted');
            $check($a->isAcquired() !== $hooked, 'request 1: the object of lock a knows it is ' . $released);
            $check($s->isAcquired() !== $hooked, 'request 1: the object of semaphore s knows its permit is ' . $released);
            $check($k->isAcquired(), 'request 1: lock k (auto_release off) is still held by its object');
            $check($ks->isAcquired(), 'request 1: the permit of ks (auto_release off) is still held by its object');
            $other = new RedisLock($key('a'), 30, null, ['reentrant' => false]);
            $check($other->acquire() === $hooked, 'request 1: another object ' . ($hooked ? 'takes' : 'cannot take') . ' lock a');
            $GLOBALS['forgotten'][] = $other;
            $check($k->release(), 'request 1: lock k released by its object');
            break;
        case 2:
            [, $ks] = $GLOBALS['kept'];
            $check($ks->release(), 'request 2: the permit of ks given back by its object');
            $last = new RedisLock($key('last'), 30);
            $k2 = new RedisLock($key('k2'), 30, null, ['auto_release' => false]);
            $check($last->acquire(), 'request 2: lock last taken');
            $check($k2->acquire(), 'request 2: lock k2 taken, auto_release off (kept past the worker)');
            $GLOBALS['forgotten'][] = $last;
            $GLOBALS['kept'][] = $k2;
            break;
    }
};

while (host_handle_request($request)) {
    // Between two requests, after the SAPI's request end.
    $n = host_request_number() - 1;
    switch ($n) {
        case 0:
            $check($held('a') !== $hooked, "after request 0: lock a is $released");
            $check($permits('s') === ($hooked ? 0 : 1), "after request 0: the permit of semaphore s is $released");
            $check($readers('r') === ($hooked ? 0 : 1) && $held('r') !== $hooked, "after request 0: the read hold of lock r is $released");
            $check($held('k') && redis_cmd($url, 'PTTL', $key('k')) > 0, 'after request 0: lock k (auto_release off) is still held');
            $check($permits('ks') === 1, 'after request 0: the permit of ks (auto_release off) is still held');
            break;
        case 1:
            $check($held('a') !== $hooked, "after request 1: lock a is $released");
            $check(!$held('k'), 'after request 1: lock k is free (released by its object)');
            break;
        case 2:
            $check($held('last') !== $hooked, "after request 2: lock last is $released");
            $check($held('k2'), 'after request 2: lock k2 (auto_release off) is still held');
            $check($permits('ks') === 0, 'after request 2: semaphore ks has no holder');
            break;
    }
}
// The worker's own end (output is on again): RSHUTDOWN follows.
$flush();
echo "requests served: ", host_request_number(), "\n";

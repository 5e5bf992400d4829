<?php
/*
 * The script of scripts/sapi-hook-test.sh for sapi-host's classic mode
 * (--classic 3, SAPI name "frankenphp"): each run is a full PHP request, as
 * FrankenPHP runs a script outside worker mode, so RSHUTDOWN and the
 * SAPI's deactivate (with the extension's hook) both end it. The holds
 * must be released once, by the first; the hook then finds nothing. One
 * "ok - ..." or "not ok - ..." line per check.
 */
require dirname(__DIR__, 2) . '/php-tests/config.inc';

use RedisLock\Semaphore;

$url = redislock_test_url();
$prefix = getenv('SAPI_HOOK_PREFIX') ?: 'sapi-hook-';
$key = fn (string $name): string => $prefix . $name;
$check = function (bool $ok, string $what): void {
    echo $ok ? 'ok' : 'not ok', " - $what\n";
};
$n = host_request_number();
$releases = RedisLock::stats('process')['primitives']['lock']['releases'];

if ($n > 0) {
    // Counters are per process: they survive the request.
    $check($releases === $n, "request $n: $n releases so far (one per request), $releases counted");
    $check(redis_cmd($url, 'EXISTS', $key('c')) === 0, "request $n: lock c of the request before is released");
    $check(redis_cmd($url, 'ZCOUNT', $key('cs') . '~~s', '(0', '+inf') === 0, "request $n: the permit of semaphore cs of the request before is released");
    $check(redis_cmd($url, 'EXISTS', $key('ck')) === 1, "request $n: lock ck (auto_release off) is still held");
}
$c = new RedisLock($key('c'), 30);
$again = new RedisLock($key('c'), 30);
$cs = new Semaphore($key('cs'), 2, 30);
$check($c->acquire() && $again->acquire(), "request $n: lock c taken twice (reentrant)");
$check($cs->acquire(), "request $n: a permit of semaphore cs taken");
if ($n === 0) {
    $ck = new RedisLock($key('ck'), 30, null, ['auto_release' => false]);
    $check($ck->acquire(), "request $n: lock ck taken, auto_release off");
    $GLOBALS['kept'] = $ck;
}
$GLOBALS['forgotten'] = [$c, $again, $cs];

<?php
/*
 * Run by zts/host.c on the main thread once every thread has finished:
 * what the requests recorded, and what they left in Redis. Exit status 0
 * when all is well.
 */

require __DIR__ . '/../php-tests/config.inc';

[, , , , $threads, $requests, $rounds] = array_map('intval', $argv);
$url = getenv('REDISLOCK_TEST_URL');
$workers = $threads - 1;
$problems = redis_cmd($url, 'LRANGE', 'zts:failures', '0', '-1');
$expect = function (bool $ok, string $what) use (&$problems): void {
    if (!$ok) {
        $problems[] = $what;
    }
};

$started = (int) redis_cmd($url, 'GET', 'zts:started');
$finished = (int) redis_cmd($url, 'GET', 'zts:finished');
$done = (int) redis_cmd($url, 'GET', 'zts:workers:done');
$holderRounds = (int) redis_cmd($url, 'GET', 'zts:holder:rounds');
$total = (int) redis_cmd($url, 'GET', 'zts:total');
$expect($started === $workers * $requests, "$started worker requests started, not " . $workers * $requests);
$expect($finished === $workers * $requests, "$finished worker requests finished, not " . $workers * $requests);
$expect($done === $workers, "$done worker threads done, not $workers");
$expect((int) redis_cmd($url, 'GET', 'zts:inside') === 0, 'zts:inside is not 0');
$expect($total === $workers * $requests * $rounds + $holderRounds,
    "$total critical sections, not " . ($workers * $requests * $rounds + $holderRounds));
// Every hold ended with its request: the holder's (renewed, in a cycle),
// the forgotten ones (600 s leases) and the shared key. Only helper keys
// (with "~": waiters' queue and marks, which expire by themselves) may be
// left of the contended key.
$left = array_values(array_filter(redis_keys_left($url, 'zts:*'),
    fn (string $k) => preg_match('/^zts:(failures|started|finished|total|inside|holder:.*|workers:done|held:token)$/', $k) !== 1));
$expect($left === [] || array_filter($left, fn ($k) => !str_contains($k, '~')) === [],
    'left in Redis: ' . implode(', ', $left));
$lock = new RedisLock('zts:held', 5.0, $url);
$expect($lock->acquire(0.0), "the holder thread's lock was not released at its request end");
$lock->release();
$permit = new RedisLock\Semaphore('zts:sem', 1, 5.0, $url);
$expect($permit->acquire(0.0), "the holder thread's permit was not given back at its request end");
$permit->release();

if ($problems) {
    echo "zts-host: FAILED\n  ", implode("\n  ", $problems), "\n";
    exit(1);
}
printf("zts-host: %d threads (1 holder, %d workers x %d requests x %d rounds): "
    . "%d critical sections on one key, never two inside; every request's holds ended with it\n",
    $threads, $workers, $requests, $rounds, $total);

--TEST--
truth: a waiter paused (SIGSTOP) while the lock is handed to it, past its lease, never reports a hold Redis gave to someone else; when it does get the lock its fencing token is there and greater
--EXTENSIONS--
redislock
--SKIPIF--
<?php require __DIR__ . '/../skipif.inc'; ?>
--FILE--
<?php
require __DIR__ . '/../config.inc';
require __DIR__ . '/../children.inc';
$url = redislock_test_url();
$key = redislock_test_key('paused-waiter');

// The issue's reproduction. H (here) holds; W (ttl 1 s, read_timeout 5 s,
// fencing, auto_renew) waits in acquire(10) until its mark says starving,
// so the release hands the lock to W; W is stopped before the release.
$h = new RedisLock($key, 10, $url);
var_dump($h->acquire());
$w = spawn_php(sprintf('
    $l = new RedisLock(%s, 1, %s, ["fencing" => true, "read_timeout" => 5, "auto_renew" => true,
                                   "reentrant" => false]);
    echo "waiting\n";
    $got = $l->acquire(10.0);
    $at = hrtime(true);
    echo json_encode(["got" => $got, "at" => $at, "token" => $l->token(), "fence" => $l->fencingToken(),
        "owner" => redis_cmd(%2$s, "GET", %1$s), "acquired" => $l->isAcquired()]), "\n";
    usleep(100000);
    echo json_encode(["still" => $l->isAcquired(), "owner" => redis_cmd(%2$s, "GET", %1$s),
        "released" => $l->release()]), "\n";',
    var_export($key, true), var_export($url, true)));
check('W waits', read_line($w) === 'waiting' && wait_until(fn () => redis_cmd($url, 'ZCARD', $key . '~~q') === 1));
$w_token = redis_cmd($url, 'ZRANGE', $key . '~~q', '0', '0')[0] ?? '';
check('W is starving', wait_until(
    fn () => str_ends_with((string) redis_cmd($url, 'GET', $key . '~~a~' . $w_token), ':1'), 2.0));
proc_terminate($w[0], SIGSTOP);
usleep(100000);
$t_release = hrtime(true);
var_dump($h->release());
check('handed to the stopped W', redis_cmd($url, 'GET', $key) === $w_token);

// T polls until it gets the lock: the hand-over lasts W's mark, at most
// its 1 s lease, and W cannot claim it while stopped.
$t = new RedisLock($key, 10, $url, ['fencing' => true, 'reentrant' => false]);
$deadline = microtime(true) + 3.0;
while (!$t->acquire() && microtime(true) < $deadline) {
    usleep(10000);
}
$t_got = since($t_release);
check('T gets it once the hand-over ran out (within 1.6 s)', $t->isAcquired() && $t_got < 1.6,
    sprintf('%.3f s', $t_got));
$t_fence = $t->fencingToken();
usleep(max(0, (int) (2.0e6 - since($t_release) * 1e6)));
proc_terminate($w[0], SIGCONT);              // W runs again 2 s after the release
usleep(1000000);                             // T holds on for a second
check('T still holds it, W did not take it', redis_cmd($url, 'GET', $key) === $t->token());
$t_released = hrtime(true);
var_dump($t->release());

$r = json_decode(read_line($w), true) ?? [];
check('W got the lock only after T released it', ($r['got'] ?? null) === true && ($r['at'] ?? 0) > $t_released,
    json_encode($r));
check('and held it then', ($r['owner'] ?? null) === ($r['token'] ?? 0) && ($r['acquired'] ?? null) === true,
    json_encode($r));
check("with a fencing token greater than T's", is_int($r['fence'] ?? null) && $r['fence'] > $t_fence,
    json_encode($r) . " T: $t_fence");
$r2 = json_decode(read_line($w), true) ?? [];
check('W still held it and released it', ($r2['still'] ?? null) === true && ($r2['released'] ?? null) === true
    && ($r2['owner'] ?? null) === ($r['token'] ?? 0), json_encode($r2));
[$code, $out] = finish_php($w);
check('W ended', $code === 0 && $out === '', "$code: $out");
var_dump(redis_keys_left($url, $key . '*'));
?>
--EXPECT--
bool(true)
W waits: ok
W is starving: ok
bool(true)
handed to the stopped W: ok
T gets it once the hand-over ran out (within 1.6 s): ok
T still holds it, W did not take it: ok
bool(true)
W got the lock only after T released it: ok
and held it then: ok
with a fencing token greater than T's: ok
W still held it and released it: ok
W ended: ok
array(0) {
}

--TEST--
A waiter killed with SIGKILL while queued is skipped by the release once it stopped checking in; the next waiter gets the lock
--EXTENSIONS--
redislock
--SKIPIF--
<?php require __DIR__ . '/../skipif.inc'; ?>
--FILE--
<?php
require __DIR__ . '/../config.inc';
require __DIR__ . '/../children.inc';
$url = redislock_test_url();
$key = redislock_test_key('killed-waiter');

$lock = new RedisLock($key, 10, $url);
var_dump($lock->acquire());

// W1 checks in every 0.2 s, so its queue entry counts as live for
// 2 * 0.2 + 0.5 = 0.9 s after its last check. It asks for a 10 s lease: a
// lock handed to it after its death would block W2 for 10 s.
$w1 = spawn_php(sprintf('
    $l = new RedisLock(%s, 10, %s, ["retry_delay" => 0.2]);
    echo "waiting\n";
    var_dump($l->acquire(10.0));',
    var_export($key, true), var_export($url, true)));
check('W1 queued', wait_until(fn () => redis_cmd($url, 'ZCARD', $key . '~~q') === 1));
$w1_token = redis_cmd($url, 'ZRANGE', $key . '~~q', '0', '-1')[0] ?? '';
usleep(250000);                                  // it has checked in at least once
proc_terminate($w1[0], 9);
$t_kill = hrtime(true);
[$code, $out] = finish_php($w1);
check('W1 killed', $code === 'signal 9' && trim($out) === 'waiting', "$code: $out");

$w2 = spawn_php(sprintf('
    $l = new RedisLock(%s, 10, %s);
    $got = $l->acquire(3.0);
    echo json_encode(["got" => $got, "token" => $l->token(), "at" => hrtime(true)]), "\n";',
    var_export($key, true), var_export($url, true)));
check('W2 queued behind W1', wait_until(fn () => redis_cmd($url, 'ZCARD', $key . '~~q') === 2));
$queue = redis_cmd($url, 'ZRANGE', $key . '~~q', '0', '-1');
check('W1 first in the queue', ($queue[0] ?? '') === $w1_token);

// Release once W1's entry has gone stale (0.9 s after its last check).
usleep(max(0, (int) (1.1e6 - (hrtime(true) - $t_kill) / 1e3)));
$t_release = hrtime(true);
var_dump($lock->release());
$r = json_decode(read_line($w2), true);
check('W2 got the lock', ($r['got'] ?? null) === true);
$handoff = (($r['at'] ?? 0) - $t_release) / 1e9;
check('promptly after the release', $handoff >= 0 && $handoff < 0.3, sprintf('%.3f s', $handoff));
check('within 1.5 s of the kill', (($r['at'] ?? 0) - $t_kill) / 1e9 < 1.5, sprintf('%.3f s', (($r['at'] ?? 0) - $t_kill) / 1e9));
[$code, $out] = finish_php($w2);
check('W2 ended', $code === 0 && $out === '', "$code: $out");
// The dead waiter left nothing behind: no queue entry, no info, no wake list.
var_dump((redis_cmd($url, 'EXISTS', $key, $key . '~~q', $key . '~~w~' . $w1_token) + count(redis_cmd($url, 'KEYS', $key . '~~a~*'))));
?>
--EXPECT--
bool(true)
W1 queued: ok
W1 killed: ok
W2 queued behind W1: ok
W1 first in the queue: ok
bool(true)
W2 got the lock: ok
promptly after the release: ok
within 1.5 s of the kill: ok
W2 ended: ok
int(0)

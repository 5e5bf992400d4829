--TEST--
departed waiters: a starving waiter SIGKILLed while queued, and still counted alive when the holder releases (so handed the lock), delays the live waiter behind it by one alive window (2 x retry_delay + 0.5 s) at most
--EXTENSIONS--
redislock
--SKIPIF--
<?php require __DIR__ . '/../skipif.inc'; ?>
--FILE--
<?php
require __DIR__ . '/../config.inc';
require __DIR__ . '/../children.inc';
$url = redislock_test_url();
$key = redislock_test_key('killed-before-handoff');

// Holder ttl 60; waiter A (acquire(30), default retry_delay 0.5 s) waits
// until its mark says it is starving (it has waited past its first
// wake-up timeout: the next release hands the lock to it), then is killed;
// B queues behind A. A's mark lives for 2 * 0.5 + 0.5 = 1.5 s after its
// last step, so A still counts as alive when the release hands it the lock.
$lock = new RedisLock($key, 60, $url);
var_dump($lock->acquire());
$a = spawn_php(sprintf('
    $l = new RedisLock(%s, 60, %s);
    echo "waiting\n";
    $l->acquire(30.0);',
    var_export($key, true), var_export($url, true)));
check('A queued', read_line($a) === 'waiting' && wait_until(fn () => redis_cmd($url, 'ZCARD', $key . '~~q') === 1));
$a_token = redis_cmd($url, 'ZRANGE', $key . '~~q', '0', '0')[0] ?? '';
check('A is starving', wait_until(
    fn () => str_ends_with((string) redis_cmd($url, 'GET', $key . '~~a~' . $a_token), ':1'), 2.0));
$b = spawn_php(sprintf('
    $l = new RedisLock(%s, 60, %s);
    echo "waiting\n";
    $got = $l->acquire(30.0);
    echo json_encode(["got" => $got, "at" => hrtime(true)]), "\n";
    $l->release();',
    var_export($key, true), var_export($url, true)));
check('B queued behind A', read_line($b) === 'waiting' && wait_until(fn () => redis_cmd($url, 'ZCARD', $key . '~~q') === 2));
proc_terminate($a[0], 9);
[$code] = finish_php($a);
check('A killed', $code === 'signal 9', (string) $code);
$t_release = hrtime(true);
var_dump($lock->release());
// The release handed the lock to A, which is dead but not yet known to be.
check('handed to dead A', redis_cmd($url, 'GET', $key) === $a_token);
$pttl = redis_cmd($url, 'PTTL', $key);
check('for what is left of its mark only, not its 60 s lease', $pttl > 0 && $pttl <= 1500, "pttl $pttl");
$r = json_decode(read_line($b), true);
$delay = (($r['at'] ?? 0) - $t_release) / 1e9;
check('B got the lock', ($r['got'] ?? null) === true);
check('within 2 x retry_delay + 0.5 s of the release (plus margin)', $delay > 0 && $delay < 1.5 + 0.3, sprintf('%.3f s', $delay));
[$code, $out] = finish_php($b);
check('B ended', $code === 0 && $out === '', "$code: $out");
var_dump(redis_cmd($url, 'EXISTS', $key, $key . '~~q') + count(redis_cmd($url, 'KEYS', $key . '~~a~*')));
// Nobody will pop dead A's wake-up: it expires by itself.
$pttl = redis_cmd($url, 'PTTL', $key . '~~w~' . $a_token);
check("A's wake-up list expires", $pttl === -2 || ($pttl > 0 && $pttl <= 2500), "pttl $pttl");
?>
--EXPECT--
bool(true)
A queued: ok
A is starving: ok
B queued behind A: ok
A killed: ok
bool(true)
handed to dead A: ok
for what is left of its mark only, not its 60 s lease: ok
B got the lock: ok
within 2 x retry_delay + 0.5 s of the release (plus margin): ok
B ended: ok
int(0)
A's wake-up list expires: ok

--TEST--
A waiter whose wake-up is lost (lock handed to it, nothing pushed) still gets the lock within about retry_delay
--EXTENSIONS--
redislock
--SKIPIF--
<?php require __DIR__ . '/../skipif.inc'; ?>
--FILE--
<?php
require __DIR__ . '/../config.inc';
require __DIR__ . '/../children.inc';
$url = redislock_test_url();
$key = redislock_test_key('lost-wakeup');
redis_cmd($url, 'SET', $key, 'other-owner', 'PX', '10000');

$waiter = spawn_php(sprintf('
    $l = new RedisLock(%s, 10, %s, ["retry_delay" => 0.2]);
    $got = $l->acquire(3.0);
    $t = hrtime(true);
    echo json_encode(["got" => $got, "token" => $l->token(), "at" => $t]), "\n";
    usleep(200000);                              // hold a little, then release at exit',
    var_export($key, true), var_export($url, true)));

check('waiter queued', wait_until(fn () => redis_cmd($url, 'ZCARD', $key . '~~q') === 1));
$queued = redis_cmd($url, 'ZRANGE', $key . '~~q', '0', '-1');
$token = $queued[0] ?? '';
usleep(50000);                                   // it is blocked now
// A handoff whose wake-up push was lost: owner, queue and the waiter's
// mark ("h": handed the lock) as the release script leaves them, but
// nothing in the waiter's wake list.
$t_handoff = hrtime(true);
redis_cmd($url, 'SET', $key, $token, 'PX', '5000');
redis_cmd($url, 'ZREM', $key . '~~q', $token);
redis_cmd($url, 'SET', $key . '~~a~' . $token, 'h', 'PX', '5000');

$line = read_line($waiter);
$r = json_decode($line, true);
check('waiter got the lock', ($r['got'] ?? null) === true, $line);
check('with the token handed to it', ($r['token'] ?? null) === $token);
$latency = (($r['at'] ?? 0) - $t_handoff) / 1e9;
check('within retry_delay (0.2 s) plus margin', $latency > 0 && $latency < 0.45, sprintf('%.3f s', $latency));
check('the lock still holds its token', redis_cmd($url, 'GET', $key) === $token);
$pttl = redis_cmd($url, 'PTTL', $key);
// The hand-over gives only the alive window; the waiter claims its ttl.
check('the waiter claimed its full lease', $pttl > 8000 && $pttl <= 10000, "pttl $pttl");
check('no helper keys left', (redis_cmd($url, 'EXISTS', $key . '~~q', $key . '~~w~' . $token) + count(redis_cmd($url, 'KEYS', $key . '~~a~*'))) === 0);
[$code, $out] = finish_php($waiter);
check('waiter ended and released', $code === 0 && $out === '' && redis_cmd($url, 'EXISTS', $key) === 0, "exit $code: $out");
?>
--EXPECT--
waiter queued: ok
waiter got the lock: ok
with the token handed to it: ok
within retry_delay (0.2 s) plus margin: ok
the lock still holds its token: ok
the waiter claimed its full lease: ok
no helper keys left: ok
waiter ended and released: ok

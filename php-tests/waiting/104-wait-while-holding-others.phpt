--TEST--
A process blocked waiting for one lock keeps the locks it already holds (plain and auto-renewed) intact
--EXTENSIONS--
redislock
--SKIPIF--
<?php require __DIR__ . '/../skipif.inc'; ?>
--FILE--
<?php
require __DIR__ . '/../config.inc';
require __DIR__ . '/../children.inc';
$url = redislock_test_url();
$key_a = redislock_test_key('others-a');
$key_r = redislock_test_key('others-renewed');
$key_b = redislock_test_key('others-b');

$a = new RedisLock($key_a, 10, $url);
$r = new RedisLock($key_r, 0.6, $url, ['auto_renew' => true]);   // outlives 0.6 s only if renewed
var_dump($a->acquire(), $r->acquire());

$holder = spawn_php(sprintf('
    $l = new RedisLock(%s, 10, %s);
    if (!$l->acquire()) { echo "acquire failed\n"; exit(1); }
    echo $l->token(), "\n";
    usleep(1000000);
    echo $l->release() ? "released" : "release failed", "\n";',
    var_export($key_b, true), var_export($url, true)));
$b_holder = read_line($holder);
check('B held by the child', redis_cmd($url, 'GET', $key_b) === $b_holder);

// Use the held locks before, block on B, use them after.
var_dump($a->isAcquired(), $a->refresh(10), $r->isAcquired(), $r->refresh());
$b = new RedisLock($key_b, 10, $url);
$t0 = hrtime(true);
$got = $b->acquire(3.0);
$waited = since($t0);
var_dump($got);
check('waited for the child (~1 s)', $waited > 0.7 && $waited < 2.0, sprintf('%.3f s', $waited));
check('B is ours', redis_cmd($url, 'GET', $key_b) === $b->token());
check('A intact', redis_cmd($url, 'GET', $key_a) === $a->token() && redis_cmd($url, 'PTTL', $key_a) > 8000);
$pttl = redis_cmd($url, 'PTTL', $key_r);
check('renewed lock alive after more than its ttl', redis_cmd($url, 'GET', $key_r) === $r->token()
    && $pttl > 0 && $pttl <= 600, "pttl $pttl");
var_dump($a->isAcquired(), $a->refresh(10), $r->isAcquired(), $r->refresh());
[$code, $out] = finish_php($holder);
check('child released B', $code === 0 && trim($out) === 'released', "exit $code: $out");
var_dump($b->release(), $a->release(), $r->release());
var_dump(redis_cmd($url, 'EXISTS', $key_a, $key_r, $key_b));
?>
--EXPECT--
bool(true)
bool(true)
B held by the child: ok
bool(true)
bool(true)
bool(true)
bool(true)
bool(true)
waited for the child (~1 s): ok
B is ours: ok
A intact: ok
renewed lock alive after more than its ttl: ok
bool(true)
bool(true)
bool(true)
bool(true)
child released B: ok
bool(true)
bool(true)
bool(true)
int(0)

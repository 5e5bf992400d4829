--TEST--
fencing through a handoff: the waiter handed the lock by a release gets a greater token; a waiter without the option gets none
--EXTENSIONS--
redislock
--SKIPIF--
<?php require __DIR__ . '/../skipif.inc'; ?>
--FILE--
<?php
require __DIR__ . '/../config.inc';
require __DIR__ . '/../children.inc';
// A server of its own: its fencing counter (`~~fence`) counts this test's
// acquires only.
$redis = TestRedis::start();
$url = $redis->url();
$key = redislock_test_key('fencing-handoff');

function waiter(string $key, string $url, bool $fencing): array
{
    return spawn_php(sprintf('
        $l = new RedisLock(%s, 5, %s, ["fencing" => %s]);
        $got = $l->acquire(3.0);
        echo json_encode(["got" => $got, "token" => $l->token(), "fence" => $l->fencingToken()]), "\n";
        $l->release();',
        var_export($key, true), var_export($url, true), var_export($fencing, true)));
}

$lock = new RedisLock($key, 5, $url, ['fencing' => true]);
var_dump($lock->acquire());
$mine = $lock->fencingToken();
check('we have a token', is_int($mine) && $mine >= 1, var_export($mine, true));
// Waiters are woken (or, when starving, handed the lock) by the release.

echo "-- fenced waiter\n";
$w = waiter($key, $url, true);
check('queued', wait_until(fn () => redis_cmd($url, 'ZCARD', $key . '~~q') === 1));
var_dump($lock->release());
$r = json_decode(read_line($w), true);
check('handed over', ($r['got'] ?? null) === true);
check('greater token', is_int($r['fence'] ?? null) && $r['fence'] > $mine, json_encode($r));
check('the counter is its token', (int) redis_cmd($url, 'GET', '~~fence') === ($r['fence'] ?? null));
[$code, $out] = finish_php($w);
check('waiter done', $code === 0 && $out === '', "$code: $out");

echo "-- unfenced waiter\n";
var_dump($lock->acquire());
$mine = $lock->fencingToken();
check('our token grew again', $mine > ($r['fence'] ?? PHP_INT_MAX));
$w = waiter($key, $url, false);
check('queued', wait_until(fn () => redis_cmd($url, 'ZCARD', $key . '~~q') === 1));
var_dump($lock->release());
$r = json_decode(read_line($w), true);
check('handed over', ($r['got'] ?? null) === true);
check('no fencing token', array_key_exists('fence', $r) && $r['fence'] === null, json_encode($r));
check('the counter did not move', (int) redis_cmd($url, 'GET', '~~fence') === $mine);
[$code, $out] = finish_php($w);
check('waiter done', $code === 0 && $out === '', "$code: $out");
var_dump((redis_cmd($url, 'EXISTS', $key, $key . '~~q') + count(redis_cmd($url, 'KEYS', $key . '~~a~*'))));
?>
--EXPECT--
bool(true)
we have a token: ok
-- fenced waiter
queued: ok
bool(true)
handed over: ok
greater token: ok
the counter is its token: ok
waiter done: ok
-- unfenced waiter
bool(true)
our token grew again: ok
queued: ok
bool(true)
handed over: ok
no fencing token: ok
the counter did not move: ok
waiter done: ok
int(0)

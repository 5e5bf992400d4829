--TEST--
fencing: every way of getting the lock (free, after expiry while queued, after forceRelease) gives a greater token; reentrant acquire keeps it; restore() has none
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
$key = redislock_test_key('fencing-paths');
$lock = new RedisLock($key, 5, $url, ['fencing' => true]);
$seen = [];

echo "-- free\n";
var_dump($lock->acquire());
$seen[] = $lock->fencingToken();
var_dump(redis_cmd($url, 'PTTL', '~~fence'));     // one counter per prefix and server, kept
$pttl = redis_cmd($url, 'PTTL', $key . '~~f');     // the hold's token lives with its lease
check('the hold keeps its token for its lease', $pttl > 0 && $pttl <= 5000, "$pttl");
echo "-- reentrant\n";
$same = new RedisLock($key, 5, $url, ['fencing' => true]);
var_dump($same->acquire());
var_dump($same->fencingToken() === $seen[0], $lock->fencingToken() === $seen[0]);
var_dump($same->release(), $lock->fencingToken() === $seen[0]);
var_dump($lock->release(), $lock->fencingToken());

echo "-- a plain acquire does not count\n";
$plain = new RedisLock($key, 5, $url);
var_dump($plain->acquire(), $plain->fencingToken(), $plain->release());
var_dump((int) redis_cmd($url, 'GET', '~~fence') === $seen[0]);

echo "-- blocking acquire of a free lock\n";
var_dump($lock->acquire(1.0));
$seen[] = $lock->fencingToken();
var_dump($lock->release());

echo "-- queued, then the holder's lease expires\n";
redis_cmd($url, 'SET', $key, 'expiring-holder', 'PX', '300');
var_dump($lock->acquire(2.0));
$seen[] = $lock->fencingToken();
echo "-- after forceRelease\n";
$other = new RedisLock($key, 5, $url);
var_dump($other->forceRelease());
var_dump($lock->acquire());
$seen[] = $lock->fencingToken();
echo "-- restore\n";
$restored = RedisLock::restore($key, $lock->token(), 5, $url, ['fencing' => true]);
var_dump($restored->fencingToken() === $lock->fencingToken());   // same process: joins the hold
var_dump($restored->release(), $lock->release());

[$code, $out] = redislock_run_child(sprintf('
    $l = new RedisLock(%s, 5, %s, ["fencing" => true, "auto_release" => false]);
    $l->acquire();
    echo $l->token(), " ", $l->fencingToken();',
    var_export($key, true), var_export($url, true)));
[$token, $fence] = explode(' ', $out) + ['', ''];
$seen[] = (int) $fence;
$restored = RedisLock::restore($key, $token, 5, $url, ['fencing' => true]);
var_dump($restored->isAcquired(), $restored->fencingToken());    // another process's hold: unknown
var_dump($restored->release());

echo "-- tokens\n";
check('all integers', count(array_filter($seen, 'is_int')) === count($seen), json_encode($seen));
$sorted = $seen;
sort($sorted);
check('strictly increasing', $sorted === $seen && count(array_unique($seen)) === count($seen), json_encode($seen));
var_dump((redis_cmd($url, 'EXISTS', $key, $key . '~~q') + count(redis_cmd($url, 'KEYS', $key . '~~a~*'))));
?>
--EXPECT--
-- free
bool(true)
int(-1)
the hold keeps its token for its lease: ok
-- reentrant
bool(true)
bool(true)
bool(true)
bool(true)
bool(true)
bool(true)
NULL
-- a plain acquire does not count
bool(true)
NULL
bool(true)
bool(true)
-- blocking acquire of a free lock
bool(true)
bool(true)
-- queued, then the holder's lease expires
bool(true)
-- after forceRelease
bool(true)
bool(true)
-- restore
bool(true)
bool(true)
bool(true)
bool(true)
NULL
bool(true)
-- tokens
all integers: ok
strictly increasing: ok
int(0)

--TEST--
No barging past a waiter: a holder that releases while someone waits hands it the lock, even while the waiter is stopped, and nobody can take it then; the waiter enters when it runs
--EXTENSIONS--
redislock
--SKIPIF--
<?php require __DIR__ . '/../skipif.inc'; ?>
--FILE--
<?php
require __DIR__ . '/../config.inc';
require __DIR__ . '/../children.inc';
$url = redislock_test_url();
$key = redislock_test_key('no-barging');

$lock = new RedisLock($key, 10, $url);
$other = new RedisLock($key, 10, $url);          // another object, same process
var_dump($lock->acquire());
$waiter = spawn_php(sprintf('
    $l = new RedisLock(%s, 10, %s);
    $got = $l->acquire(3.0);
    echo $got ? "got " . $l->token() : "timed out", "\n";
    usleep(300000);
    echo $l->release() ? "released" : "release failed", "\n";',
    var_export($key, true), var_export($url, true)));
check('waiter queued', wait_until(fn () => redis_cmd($url, 'ZCARD', $key . '~~q') === 1));
$waiter_token = redis_cmd($url, 'ZRANGE', $key . '~~q', '0', '-1')[0] ?? '';

// The waiter is stopped: the release hands it the lock all the same.
proc_terminate($waiter[0], SIGSTOP);
var_dump($lock->release());
var_dump($lock->acquire());                      // handed over: no barging
var_dump($other->acquire());
var_dump(redis_cmd($url, 'SET', $key, 'barger', 'NX', 'PX', '10000'));   // a plain SET NX neither
check('the waiter owns the lock', redis_cmd($url, 'GET', $key) === $waiter_token);
proc_terminate($waiter[0], SIGCONT);
check('the waiter knows it', read_line($waiter) === "got $waiter_token");
// A new waiter queues behind and gets it when the first one releases.
$t0 = hrtime(true);
var_dump($lock->acquire(3.0));
check('after the waiter released', since($t0) > 0.15, sprintf('%.3f s', since($t0)));
[$code, $out] = finish_php($waiter);
check('waiter released', $code === 0 && trim($out) === 'released', "exit $code: $out");
check('the lock holds our token', redis_cmd($url, 'GET', $key) === $lock->token());
var_dump($lock->release());
var_dump((redis_cmd($url, 'EXISTS', $key, $key . '~~q') + count(redis_cmd($url, 'KEYS', $key . '~~a~*'))));
?>
--EXPECT--
bool(true)
waiter queued: ok
bool(true)
bool(false)
bool(false)
NULL
the waiter owns the lock: ok
the waiter knows it: ok
bool(true)
after the waiter released: ok
waiter released: ok
the lock holds our token: ok
bool(true)
int(0)

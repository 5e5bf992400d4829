--TEST--
auto_renew: isAcquired() never claims a lease Redis no longer has when renewals fail, also after refresh() with a longer ttl
--EXTENSIONS--
redislock
--SKIPIF--
<?php require __DIR__ . '/../skipif.inc'; ?>
--FILE--
<?php
require __DIR__ . '/../config.inc';
require __DIR__ . '/../children.inc';
// A private server that this test freezes (SIGSTOP): renewals then time out.
$server = TestRedis::start();
$url = $server->url();

// Holds a 0.6 s auto-renewed lock (after $refresh), freezes the server for
// 1 s, asks isAcquired() while frozen, then compares with Redis.
function frozen_answer(TestRedis $server, string $url, ?float $refresh): void
{
    $key = redislock_test_key('renew-frozen');
    $lock = new RedisLock($key, 0.6, $url, ['auto_renew' => true, 'read_timeout' => 0.2]);
    $lock->acquire();
    var_dump($refresh === null ? $lock->refresh() : $lock->refresh($refresh));
    usleep(300000);                              // at least one renewal after the refresh
    $pttl = redis_cmd($url, 'PTTL', $key);
    $server->pause();
    usleep(1000000);                             // longer than the 0.6 s lease the last renewal set
    $claims = $lock->isAcquired();
    $server->resume();
    $ours = redis_cmd($url, 'GET', $key) === $lock->token();
    printf("isAcquired: %s, lease in Redis: %s\n", var_export($claims, true), $ours ? 'ours' : 'gone');
    check('isAcquired() true only if the lease is still ours', !$claims || $ours,
        "pttl was $pttl before the freeze");
    $lock->release();
    redis_cmd($url, 'DEL', $key);
}

echo "-- refresh()\n";
frozen_answer($server, $url, null);
echo "-- refresh(30)\n";
frozen_answer($server, $url, 30.0);
?>
--EXPECTF--
-- refresh()
bool(true)
isAcquired: false, lease in Redis: gone
isAcquired() true only if the lease is still ours: ok
-- refresh(30)
bool(true)
isAcquired: %s, lease in Redis: %s
isAcquired() true only if the lease is still ours: ok

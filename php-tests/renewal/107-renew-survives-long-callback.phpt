--TEST--
auto_renew: a 1 s lease survives a 3 s withLock() callback; nobody else can take it meanwhile; released afterwards
--EXTENSIONS--
redislock
--SKIPIF--
<?php require __DIR__ . '/../skipif.inc'; ?>
--FILE--
<?php
require __DIR__ . '/../config.inc';
require __DIR__ . '/../children.inc';
$url = redislock_test_url();
$key = redislock_test_key('renew-long-callback');

$lock = new RedisLock($key, 1.0, $url, ['auto_renew' => true]);
$result = $lock->withLock(function (RedisLock $l) use ($url, $key) {
    $token = $l->token();
    // Another process tries every 200 ms while we hold it.
    $other = spawn_php(sprintf('
        $l = new RedisLock(%s, 5, %s);
        $results = [];
        for ($i = 0; $i < 12; $i++) {
            $results[] = $l->acquire() ? "T" : "F";
            usleep(200000);
        }
        echo implode("", $results), "\n";',
        var_export($key, true), var_export($url, true)));
    $t0 = hrtime(true);
    $min_pttl = PHP_INT_MAX;
    $owner_ok = true;
    while (since($t0) < 3.0) {
        $owner_ok = $owner_ok && redis_cmd($url, 'GET', $key) === $token;
        $min_pttl = min($min_pttl, redis_cmd($url, 'PTTL', $key));
        usleep(50000);
    }
    check('held by us for 3 s', $owner_ok);
    check('lease never ran low', $min_pttl > 300 && $min_pttl <= 1000, "min pttl $min_pttl");
    check('isAcquired', $l->isAcquired());
    [$code, $out] = finish_php($other);
    check('the other process never got it', $code === 0 && trim($out) === str_repeat('F', 12), "$code: $out");
    return 'done';
});
var_dump($result);
var_dump(redis_cmd($url, 'EXISTS', $key));
var_dump($lock->token(), $lock->isAcquired());
?>
--EXPECT--
held by us for 3 s: ok
lease never ran low: ok
isAcquired: ok
the other process never got it: ok
string(4) "done"
int(0)
NULL
bool(false)

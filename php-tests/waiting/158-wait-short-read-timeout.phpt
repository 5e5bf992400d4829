--TEST--
read_timeout: a very short read timeout never cuts a blocking wait short; acquire($wait) on a held lock returns false after $wait
--EXTENSIONS--
redislock
--SKIPIF--
<?php require __DIR__ . '/../skipif.inc'; ?>
--FILE--
<?php
require __DIR__ . '/../config.inc';
require __DIR__ . '/../children.inc';
$url = redislock_test_url();
$key = redislock_test_key('short-read-timeout');
redis_cmd($url, 'SET', $key, 'someone-else', 'PX', '30000');
foreach ([0.01, 0.05, 0.01] as $rt) {
    $lock = new RedisLock($key, 5, $url, ['read_timeout' => $rt]);
    $t0 = hrtime(true);
    try {
        $got = $lock->acquire(1.5);
        $e = null;
    } catch (RedisLock\LockException $e) {
        $got = get_class($e) . ': ' . $e->getMessage();
    }
    $elapsed = since($t0);
    check("read_timeout $rt: false after 1.5 s", $got === false && $elapsed >= 1.5 && $elapsed < 2.2, var_export($got, true) . sprintf(' after %.3f s', $elapsed));
}
var_dump(redis_cmd($url, 'DEL', $key), redis_cmd($url, 'EXISTS', $key . '~~q') + count(redis_cmd($url, 'KEYS', $key . '~~*')));
?>
--EXPECT--
read_timeout 0.01: false after 1.5 s: ok
read_timeout 0.05: false after 1.5 s: ok
read_timeout 0.01: false after 1.5 s: ok
int(1)
int(0)

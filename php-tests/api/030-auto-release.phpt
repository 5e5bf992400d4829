--TEST--
auto_release: holds are released when the object is destroyed or the request ends, unless auto_release is false
--EXTENSIONS--
redislock
--SKIPIF--
<?php require __DIR__ . '/../skipif.inc'; ?>
--FILE--
<?php
require __DIR__ . '/../config.inc';
$url = redislock_test_url();

echo "-- unset\n";
$key = redislock_test_key('auto-unset');
$lock = redislock_test_lock($key, 10);
var_dump($lock->acquire());
var_dump(redis_cmd($url, 'EXISTS', redislock_test_stored_key($key)));
unset($lock);
var_dump(redis_cmd($url, 'EXISTS', redislock_test_stored_key($key)));

echo "-- reassigned\n";
$key = redislock_test_key('auto-null');
$lock = redislock_test_lock($key, 10);
var_dump($lock->acquire());
$lock = null;
var_dump(redis_cmd($url, 'EXISTS', redislock_test_stored_key($key)));

echo "-- out of function scope\n";
function hold(string $url, string $key): int
{
    $l = redislock_test_lock($key, 10);
    $l->acquire();
    return redis_cmd($url, 'EXISTS', redislock_test_stored_key($key));
}
$key = redislock_test_key('auto-scope');
var_dump(hold($url, $key));
var_dump(redis_cmd($url, 'EXISTS', redislock_test_stored_key($key)));

echo "-- reentrant holds: released with the last object\n";
$key = redislock_test_key('auto-reentrant');
$a = redislock_test_lock($key, 10);
$b = redislock_test_lock($key, 10);
var_dump($a->acquire(), $b->acquire());
unset($a);
var_dump(redis_cmd($url, 'EXISTS', redislock_test_stored_key($key)));
unset($b);
var_dump(redis_cmd($url, 'EXISTS', redislock_test_stored_key($key)));

echo "-- auto_release false\n";
$key = redislock_test_key('auto-off');
$lock = redislock_test_lock($key, 10, ['auto_release' => false]);
var_dump($lock->acquire());
$token = $lock->token();
unset($lock);
var_dump(redis_cmd($url, 'GET', redislock_test_stored_key($key)) === $token);
redis_cmd($url, 'DEL', redislock_test_stored_key($key));

echo "-- child process ends without release\n";
foreach ([[], ['auto_release' => true], ['auto_release' => false]] as $options) {
    $key = redislock_test_key('auto-child');
    [$code, $out] = redislock_run_child(sprintf(
        '$l = new RedisLock(%s, 10, %s, %s);
         var_dump($l->acquire());
         $GLOBALS["keep"] = $l;',
        var_export($key, true), var_export(redislock_test_servers(), true),
        var_export(redislock_test_options($options), true)));
    echo json_encode($options), ": exit $code, ", trim($out), ", EXISTS ", redis_cmd($url, 'EXISTS', redislock_test_stored_key($key)), "\n";
    redis_cmd($url, 'DEL', redislock_test_stored_key($key));
}
?>
--EXPECT--
-- unset
bool(true)
int(1)
int(0)
-- reassigned
bool(true)
int(0)
-- out of function scope
int(1)
int(0)
-- reentrant holds: released with the last object
bool(true)
bool(true)
int(1)
int(0)
-- auto_release false
bool(true)
bool(true)
-- child process ends without release
[]: exit 0, bool(true), EXISTS 0
{"auto_release":true}: exit 0, bool(true), EXISTS 0
{"auto_release":false}: exit 0, bool(true), EXISTS 1

--TEST--
max_execution_time exceeded inside a withLock() callback: the lock is released
--EXTENSIONS--
redislock
--SKIPIF--
<?php require __DIR__ . '/../skipif.inc'; ?>
--FILE--
<?php
require __DIR__ . '/../config.inc';
$url = redislock_test_url();
$key = redislock_test_key('withlock-time-limit');

$t0 = microtime(true);
[$code, $out] = redislock_run_child(sprintf(
    'set_time_limit(1);
     $l = new RedisLock(%s, 30, %s, %s);
     $l->withLock(function () { echo "in callback\n"; $x = 0; while (true) { $x++; } });
     echo "not reached\n";',
    var_export($key, true), var_export(redislock_test_servers(), true),
    var_export(redislock_test_options(), true)), [], true);
$elapsed = microtime(true) - $t0;
var_dump($code);
var_dump(str_starts_with($out, "in callback\n"));
var_dump(str_contains($out, 'Maximum execution time of 1 second exceeded'));
var_dump(str_contains($out, 'not reached'));
var_dump($elapsed < 5);
var_dump(redis_cmd($url, 'EXISTS', redislock_test_stored_key($key)));       // ttl was 30 s: released, not expired
?>
--EXPECT--
int(255)
bool(true)
bool(true)
bool(false)
bool(true)
int(0)

--TEST--
A fatal error inside a withLock() callback: the lock is released when the request ends
--EXTENSIONS--
redislock
--SKIPIF--
<?php require __DIR__ . '/../skipif.inc'; ?>
--FILE--
<?php
require __DIR__ . '/../config.inc';
$url = redislock_test_url();

$cases = [
    'E_USER_ERROR' => 'trigger_error("boom-user-fatal", E_USER_ERROR);',
    // Bounded (at most 2 GB) even where memory_limit would not apply.
    'memory' => '$a = []; for ($i = 0; $i < 20000; $i++) { $a[] = str_repeat("x", 100000); }',
];
foreach ($cases as $name => $fatal) {
    echo "-- $name\n";
    $key = redislock_test_key('withlock-fatal');
    [$code, $out] = redislock_run_child(sprintf(
        '$l = new RedisLock(%s, 10, %s, %s);
         $l->withLock(function () { echo "in callback\n"; %s });
         echo "not reached\n";',
        var_export($key, true), var_export(redislock_test_servers(), true),
        var_export(redislock_test_options(), true), $fatal), ['memory_limit' => '32M'], true);
    var_dump($code);
    var_dump(str_starts_with($out, "in callback\n"));
    var_dump(str_contains($out, 'Fatal error: '));
    var_dump(str_contains($out, 'boom-user-fatal') || str_contains($out, 'Allowed memory size'));
    var_dump(str_contains($out, 'not reached'));
    var_dump(redis_cmd($url, 'EXISTS', redislock_test_stored_key($key)));
}
?>
--EXPECT--
-- E_USER_ERROR
int(255)
bool(true)
bool(true)
bool(true)
bool(false)
int(0)
-- memory
int(255)
bool(true)
bool(true)
bool(true)
bool(false)
int(0)

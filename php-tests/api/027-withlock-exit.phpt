--TEST--
exit() inside a withLock() callback releases the lock
--EXTENSIONS--
redislock
--SKIPIF--
<?php require __DIR__ . '/../skipif.inc'; ?>
--FILE--
<?php
require __DIR__ . '/../config.inc';
$url = redislock_test_url();

foreach ([[], ['auto_release' => false]] as $options) {
    $key = redislock_test_key('withlock-exit');
    [$code, $out] = redislock_run_child(sprintf(
        'require %s;
         $url = %s; $key = %s;
         register_shutdown_function(function () use ($url, $key) {
             echo "shutdown: EXISTS ", redis_cmd($url, "EXISTS", redislock_test_stored_key($key)), "\n";
         });
         $l = redislock_test_lock($key, 10, %s);
         $l->withLock(function () use ($url, $key) {
             echo "in callback: EXISTS ", redis_cmd($url, "EXISTS", redislock_test_stored_key($key)), "\n";
             exit(3);
         });
         echo "not reached\n";',
        var_export(__DIR__ . '/../config.inc', true), var_export($url, true),
        var_export($key, true), var_export($options, true)));
    var_dump($code);
    echo $out;
    var_dump(redis_cmd($url, 'EXISTS', redislock_test_stored_key($key)));
}
?>
--EXPECT--
int(3)
in callback: EXISTS 1
shutdown: EXISTS 0
int(0)
int(3)
in callback: EXISTS 1
shutdown: EXISTS 0
int(0)

--TEST--
acquire($wait) blocks while another process holds the lock and succeeds soon after it releases
--EXTENSIONS--
redislock
--SKIPIF--
<?php require __DIR__ . '/../skipif.inc'; ?>
--FILE--
<?php
require __DIR__ . '/../config.inc';
require __DIR__ . '/../children.inc';
$url = redislock_test_url();
$key = redislock_test_key('wait-release');


$pid = pcntl_fork();
if ($pid === 0) {
    $holder = redislock_test_lock($key, 10);
    if (!$holder->acquire()) {
        child_exit(1);
    }
    usleep(300000);
    child_exit($holder->release() ? 0 : 2);
}

// Wait (bounded) until the child holds the lock.
$deadline = microtime(true) + 3;
while (redis_cmd($url, 'EXISTS', redislock_test_stored_key($key)) === 0 && microtime(true) < $deadline) {
    usleep(2000);
}
$child_token = redis_cmd($url, 'GET', redislock_test_stored_key($key));
var_dump(is_string($child_token));

$lock = redislock_test_lock($key, 10);
$t0 = microtime(true);
$got = $lock->acquire(5.0);
$elapsed = microtime(true) - $t0;
var_dump($got);
var_dump($elapsed > 0.1);                        // it really waited for the child
var_dump($elapsed < 1.5);                        // and did not wait long after the release
var_dump($lock->token() !== $child_token);
var_dump(redis_cmd($url, 'GET', redislock_test_stored_key($key)) === $lock->token());

pcntl_waitpid($pid, $status);
var_dump(pcntl_wexitstatus($status));
var_dump($lock->release());
var_dump(redis_cmd($url, 'EXISTS', redislock_test_stored_key($key)));
?>
--EXPECT--
bool(true)
bool(true)
bool(true)
bool(true)
bool(true)
bool(true)
int(0)
bool(true)
int(0)

--TEST--
signals: SIGCHLD from a child that exits while the parent waits for a lock runs the handler and does not fail the wait
--EXTENSIONS--
redislock
pcntl
--SKIPIF--
<?php require __DIR__ . '/../skipif.inc'; ?>
--FILE--
<?php
require __DIR__ . '/../config.inc';
require __DIR__ . '/../children.inc';
$url = redislock_test_url();
$key = redislock_test_key('sigchld');

$holder = spawn_php(sprintf('
    $l = new RedisLock(%s, 60, %s);
    echo $l->acquire() ? "held\n" : "not held\n";
    usleep(1500000);
    $l->release();',
    var_export($key, true), var_export($url, true)));
check('holder has the lock', read_line($holder) === 'held');

pcntl_async_signals(true);
$reaped = 0;
$pid = 0;
// Only the forked child is reaped here: the holder (proc_open) exits on
// its own clock and is left to finish_php().
pcntl_signal(SIGCHLD, function () use (&$reaped, &$pid) {
    if ($pid > 0 && pcntl_waitpid($pid, $status, WNOHANG) === $pid) {
        $reaped++;
    }
});
$pid = pcntl_fork();
if ($pid === 0) {
    usleep(500000);
    child_exit(0);
}
$lock = new RedisLock($key, 60, $url);
$t0 = hrtime(true);
$got = $lock->acquire(15.0);
check('the wait went on until the release', $got === true && since($t0) > 0.8, sprintf('%.3f s', since($t0)));
check('the child was reaped by the handler', $reaped === 1, "reaped $reaped");
finish_php($holder);
var_dump($lock->release());
var_dump(redis_cmd($url, 'EXISTS', $key) + count(redis_keys_left($url, $key . '~~*')));
?>
--EXPECT--
holder has the lock: ok
the wait went on until the release: ok
the child was reaped by the handler: ok
bool(true)
int(0)

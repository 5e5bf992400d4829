--TEST--
Semaphore: a forked child never believes it holds its parent's permit, and its exit gives nothing back
--EXTENSIONS--
redislock
pcntl
--SKIPIF--
<?php require __DIR__ . '/../skipif.inc'; if (getenv('REDISLOCK_TEST_TOPOLOGY') === 'redlock') die('skip semaphores refuse Redlock'); ?>
--FILE--
<?php
require __DIR__ . '/../config.inc';
require __DIR__ . '/../children.inc';
use RedisLock\Semaphore;
$url = redislock_test_url();
$name = redislock_test_key('sem-fork-parent');
$holders = redislock_test_stored_key($name) . '~~s';
$results = tempnam(sys_get_temp_dir(), 'redislock-sem-fork-');
$s = new Semaphore($name, 1, 10, redislock_test_servers(), redislock_test_options());
var_dump($s->acquire());
$pid = pcntl_fork();
if ($pid === 0) {
    $r = [
        'isAcquired' => $s->isAcquired(),
        'remainingTtl' => $s->remainingTtl(),
        'refresh' => $s->refresh(1),
        'release' => $s->release(),
        'acquire again' => $s->acquire(),   // the permit is the parent's: none free
    ];
    file_put_contents($results, json_encode($r));
    child_exit(0);   // ends normally: gives back nothing of the parent's
}
pcntl_waitpid($pid, $status);
foreach (json_decode(file_get_contents($results), true) as $what => $v) {
    echo "child $what: ", var_export($v, true), "\n";
}
unlink($results);
var_dump(redis_cmd($url, 'ZCOUNT', $holders, '(0', '+inf'));
var_dump($s->isAcquired());
$left = $s->remainingTtl();
var_dump($left > 9 && $left <= 10);   // the child's refresh(1) did nothing
var_dump($s->release());
var_dump(redis_keys_left($url, "$holders*"));
?>
--EXPECT--
bool(true)
child isAcquired: false
child remainingTtl: NULL
child refresh: false
child release: false
child acquire again: false
int(1)
bool(true)
bool(true)
bool(true)
array(0) {
}

--TEST--
Read holds: a forked child never believes it holds its parent's read hold, and its exit gives nothing back; the parent still reads
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
$key = redislock_test_key('read-fork');
$results = tempnam(sys_get_temp_dir(), 'redislock-read-fork-');
$lock = new RedisLock($key, 10, $url);
var_dump($lock->acquireRead());
$pid = pcntl_fork();
if ($pid === 0) {
    $r = [
        'isAcquired' => $lock->isAcquired(),
        'remainingTtl' => $lock->remainingTtl(),
        'refresh' => $lock->refresh(1),
        'release' => $lock->release(),
        'acquire (no promotion of the parent\'s hold)' => $lock->acquire(),
        'readers in Redis' => redis_readers($url, $key),
    ];
    // A read hold of its own, ended with the child (request end).
    $own = new RedisLock($key, 10, $url);
    $r['a read hold of its own'] = $own->acquireRead();
    $r['readers with it'] = redis_readers($url, $key);
    file_put_contents($results, json_encode($r));
    child_exit(0);
}
pcntl_waitpid($pid, $status);
echo "child exit ", pcntl_wexitstatus($status), "\n";
foreach (json_decode(file_get_contents($results), true) as $what => $v) {
    echo "child $what: ", var_export($v, true), "\n";
}
unlink($results);
var_dump(redis_readers($url, $key));
var_dump($lock->isAcquired());
$left = $lock->remainingTtl();
var_dump($left > 9 && $left <= 10);   // the child's refresh(1) did nothing
var_dump(redis_cmd($url, 'GET', $key));
var_dump($lock->release());
var_dump(redis_keys_left($url, "$key*"));
?>
--EXPECT--
bool(true)
child exit 0
child isAcquired: false
child remainingTtl: NULL
child refresh: false
child release: false
child acquire (no promotion of the parent's hold): false
child readers in Redis: 1
child a read hold of its own: true
child readers with it: 2
int(1)
bool(true)
bool(true)
string(6) "~~read"
bool(true)
array(0) {
}

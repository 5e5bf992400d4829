--TEST--
Two locks whose keys share a hash tag stay independent: releasing one never hands it to a waiter of the other
--EXTENSIONS--
redislock
--SKIPIF--
<?php require __DIR__ . '/../skipif.inc'; redislock_skip_unless_single('counts SET and EVALSHA calls on its own server'); ?>
--FILE--
<?php
require __DIR__ . '/../config.inc';
$redis = TestRedis::start();
$url = $redis->url();
$tag = bin2hex(random_bytes(4));
$keyA = "jobs:{tenant$tag}:a";
$keyB = "jobs:{tenant$tag}:b";
$a = new RedisLock($keyA, 5, $url);
$b = new RedisLock($keyB, 5, $url);
var_dump($a->acquire(), $b->acquire());

// A second process waits for B.
$code = '$b = new RedisLock(' . var_export($keyB, true) . ', 5, ' . var_export($url, true) . ');
$got = $b->acquire(2.0);
echo $got ? "child got B\n" : "child timed out on B\n";
if ($got) { $b->release(); }';
$file = tempnam(sys_get_temp_dir(), 'redislock-tag-');
file_put_contents($file, "<?php\n" . $code);
$proc = proc_open([PHP_BINARY, '-n', '-d', 'extension=' . redislock_extension_path(), $file],
    [0 => ['file', '/dev/null', 'r'], 1 => ['pipe', 'w'], 2 => ['redirect', 1]], $pipes);
// Until the child is blocked in acquire (its SET NX on B was refused).
$deadline = microtime(true) + 1.5;
while (microtime(true) < $deadline && redis_calls($url, 'set') < 3 && redis_calls($url, 'evalsha') < 1) {
    usleep(10000);
}
usleep(100000);

// Releasing A: nobody waits for A, so A must simply be free afterwards.
var_dump($a->release());
$ownerA = redis_cmd($url, 'GET', $keyA);
echo $ownerA === null ? "A is free\n" : "A was handed to a waiter of another lock\n";
$other = new RedisLock($keyA, 5, $url);
var_dump($other->acquire());
$other->release();

// Releasing B lets the child have it.
var_dump($b->release());
$out = stream_get_contents($pipes[1]);
fclose($pipes[1]);
proc_close($proc);
unlink($file);
echo trim($out), "\n";
?>
--EXPECT--
bool(true)
bool(true)
bool(true)
A is free
bool(true)
bool(true)
child got B

--TEST--
A blocked acquire($wait) does not poll Redis in a tight loop
--EXTENSIONS--
redislock
--SKIPIF--
<?php require __DIR__ . '/../skipif.inc'; redislock_skip_unless_single('counts the commands a waiter sends to its own server'); ?>
--FILE--
<?php
require __DIR__ . '/../config.inc';
// A private server, so that only this test's commands are counted.
$server = TestRedis::start();
$url = $server->url();
$key = redislock_test_key('no-busy-poll');
redis_cmd($url, 'SET', $key, 'other-owner', 'PX', '10000');

function commands_processed(string $url): int
{
    preg_match('/^total_commands_processed:(\d+)/m', redis_cmd($url, 'INFO', 'stats'), $m);
    return (int) $m[1];
}

$lock = new RedisLock($key, 10, $url);
var_dump($lock->acquire());                      // connect outside the measured window
$before = commands_processed($url);
$t0 = microtime(true);
var_dump($lock->acquire(1.0));
$elapsed = microtime(true) - $t0;
$sent = commands_processed($url) - $before - 1;  // minus the first INFO
var_dump($elapsed >= 1.0);
var_dump($sent >= 1);
// A tight loop would send thousands; allow up to one attempt per 10 ms.
var_dump($sent <= 100);
if ($sent > 100) {
    echo "sent $sent commands in $elapsed s\n";
}
var_dump(redis_cmd($url, 'GET', $key));
?>
--EXPECT--
bool(false)
bool(false)
bool(true)
bool(true)
bool(true)
string(11) "other-owner"

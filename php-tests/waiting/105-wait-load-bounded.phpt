--TEST--
A waiter blocked for 2 s sends only a handful of commands (wake-up BLPOPs and periodic checks) and leaves the queue when it gives up
--EXTENSIONS--
redislock
--SKIPIF--
<?php require __DIR__ . '/../skipif.inc'; ?>
--FILE--
<?php
require __DIR__ . '/../config.inc';
require __DIR__ . '/../children.inc';
// A private server, so that only this test's commands are counted.
$server = TestRedis::start();
$url = $server->url();
$key = redislock_test_key('wait-load');
redis_cmd($url, 'SET', $key, 'other-owner', 'PX', '10000');

// Calls per command, from one INFO.
function stats(string $url): array
{
    preg_match_all('/^cmdstat_(\w+):calls=(\d+)/m', redis_cmd($url, 'INFO', 'commandstats'), $c);
    return array_combine($c[1], array_map('intval', $c[2]));
}

$lock = new RedisLock($key, 10, $url);           // default retry_delay: 0.5 s
var_dump($lock->acquire(0.3));                   // connect and load the scripts outside the window
$calls0 = stats($url);
$t0 = hrtime(true);
var_dump($lock->acquire(2.0));
$elapsed = since($t0);
$calls1 = stats($url);
// Commands a client sends (those the scripts run inside count too, so
// total_commands_processed would not do, nor would SET: the waiter's alive
// mark is a SET inside its scripts; a blocking acquire sends no plain SET).
$lock_calls = 0;
foreach (['blpop', 'evalsha', 'eval', 'script'] as $c) {
    $lock_calls += ($calls1[$c] ?? 0) - ($calls0[$c] ?? 0);
}
check('waited the full 2 s', $elapsed >= 2.0 && $elapsed < 2.7, sprintf('%.3f s', $elapsed));
// About one BLPOP and one check per 0.5 s, plus joining and leaving the queue.
check('lock commands between 4 and 12', $lock_calls >= 4 && $lock_calls <= 12, "$lock_calls");
printf("blpop %s\n", ($calls1['blpop'] ?? 0) - ($calls0['blpop'] ?? 0) >= 3 ? 'used' : 'not used');
var_dump(redis_cmd($url, 'GET', $key));
var_dump((redis_cmd($url, 'EXISTS', $key . '~~q') + count(redis_cmd($url, 'KEYS', $key . '~~a~*'))));   // it left the queue
var_dump(redis_cmd($url, 'KEYS', $key . '~~w~*'));
?>
--EXPECT--
bool(false)
bool(false)
waited the full 2 s: ok
lock commands between 4 and 12: ok
blpop used
string(11) "other-owner"
int(0)
array(0) {
}

--TEST--
Round trips: 50 uncontended acquire+release cycles are exactly 50 SET and 50 EVALSHA (GET, EXISTS of the waiter queue and DEL inside the script: the recipe plus one cheap read), nothing else
--EXTENSIONS--
redislock
--SKIPIF--
<?php require __DIR__ . '/../skipif.inc'; ?>
--FILE--
<?php
require __DIR__ . '/../config.inc';
$redis = TestRedis::start();
$url = $redis->url();
$key = redislock_test_key('rtt');
$lock = new RedisLock($key, 5, $url);
// Warm-up: connection opened, script loaded.
var_dump($lock->acquire(), $lock->release());
redis_cmd($url, 'CONFIG', 'RESETSTAT');
$ok = 0;
for ($i = 0; $i < 50; $i++) {
    $ok += (int) $lock->acquire();
    $ok += (int) $lock->release();
}
echo "successful calls: $ok\n";
$info = redis_cmd($url, 'INFO', 'commandstats');
preg_match_all('/^cmdstat_([a-z|]+):calls=(\d+)/m', $info, $m, PREG_SET_ORDER);
$calls = [];
foreach ($m as [, $cmd, $n]) {
    if ($cmd !== 'info' && !str_starts_with($cmd, 'config')) {
        $calls[$cmd] = (int) $n;
    }
}
ksort($calls);
foreach ($calls as $cmd => $n) {
    echo "$cmd=$n\n";
}
$stats = redis_cmd($url, 'INFO', 'stats');
preg_match('/^total_connections_received:(\d+)/m', $stats, $c);
echo "new connections: $c[1]\n";
?>
--EXPECT--
bool(true)
bool(true)
successful calls: 100
del=50
evalsha=50
exists=50
get=50
set=50
new connections: 0

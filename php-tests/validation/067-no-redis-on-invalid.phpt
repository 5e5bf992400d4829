--TEST--
Nothing is sent to Redis (not even a connection) for calls that fail validation
--EXTENSIONS--
redislock
--SKIPIF--
<?php require __DIR__ . '/../skipif.inc'; ?>
--FILE--
<?php
require __DIR__ . '/../config.inc';
$redis = TestRedis::start();
$url = $redis->url();
$key = redislock_test_key('novalid');

function stats(string $url): array
{
    $info = redis_cmd($url, 'INFO', 'all');
    preg_match('/^total_connections_received:(\d+)/m', $info, $conns);
    preg_match_all('/^cmdstat_([a-z|]+):calls=(\d+)/m', $info, $m, PREG_SET_ORDER);
    $calls = [];
    foreach ($m as [, $cmd, $n]) {
        // Our own INFO / CONFIG calls are not the extension's.
        if ($cmd !== 'info' && !str_starts_with($cmd, 'config')) {
            $calls[$cmd] = (int) $n;
        }
    }
    ksort($calls);
    return ['connections' => (int) $conns[1], 'calls' => $calls];
}

// A held lock (made before the counters are reset) and a free one.
$held = new RedisLock($key, 10, $url);
var_dump($held->acquire());
$free = new RedisLock($key . ':free', 10, $url);
redis_cmd($url, 'CONFIG', 'RESETSTAT');

$invalid = [
    fn() => new RedisLock($key, 0, $url),
    fn() => new RedisLock($key, NAN, $url),
    fn() => new RedisLock('', 5, $url),
    fn() => new RedisLock($key, 5, $url . '/x'),
    fn() => new RedisLock($key, 5, $url, ['nope' => 1]),
    fn() => new RedisLock($key, 5, $url, ['prefix' => []]),
    fn() => new RedisLock($key, 5, $url, ['read_timeout' => 0]),
    fn() => new RedisLock($key, 5, $url, ['drift_factor' => 0.7]),
    fn() => new RedisLock($key, 5, [$url, $url]),
    fn() => RedisLock::restore($key, '', 5, $url),
    fn() => $free->acquire(-1),
    fn() => $free->acquire(NAN),
    fn() => $free->acquire('x'),
    fn() => $free->refresh(-1),
    fn() => $free->withLock(fn() => null, -1),
    fn() => $free->withLock('no such function', 1),
    // On the held lock a valid call would be a round trip (reentrant acquire,
    // refresh script): the invalid ones must not be.
    fn() => $held->acquire(-1),
    fn() => $held->acquire(INF),
    fn() => $held->refresh(-1),
    fn() => $held->refresh(0.0001),
    fn() => $held->refresh([]),
    fn() => $held->withLock(fn() => null, NAN),
];
$thrown = 0;
foreach ($invalid as $i => $call) {
    try {
        $call();
        echo "call $i did not throw\n";
    } catch (Throwable $e) {
        $thrown++;
    }
}
echo "thrown: $thrown of ", count($invalid), "\n";
$after = stats($url);
echo "connections: {$after['connections']}\n";
echo "commands: ", json_encode($after['calls']), "\n";

// The counters do see the extension's traffic: one GET for isAcquired().
var_dump($held->isAcquired());
$after = stats($url);
echo "commands: ", json_encode($after['calls']), "\n";
var_dump($held->release());
?>
--EXPECT--
bool(true)
thrown: 22 of 22
connections: 0
commands: []
bool(true)
commands: {"get":1}
bool(true)

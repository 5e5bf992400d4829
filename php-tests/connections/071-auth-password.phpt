--TEST--
auth: a URL-encoded password works; a wrong or missing one is a ConnectionException that never reveals a password
--EXTENSIONS--
redislock
--SKIPIF--
<?php require __DIR__ . '/../skipif.inc'; ?>
--FILE--
<?php
require __DIR__ . '/../config.inc';
$password = 'p@ss:w/rd';
$redis = TestRedis::start(['--requirepass', $password]);
$port = $redis->port;
$goodUrl = $redis->url(':p%40ss%3Aw%2Frd@');
$key = redislock_test_key('auth');

$lock = new RedisLock($key, 5, $goodUrl);
var_dump($lock->acquire());
var_dump(redis_cmd($goodUrl, 'GET', $key) === $lock->token());
var_dump($lock->isAcquired());
var_dump($lock->release());
var_dump(redis_cmd($goodUrl, 'EXISTS', $key));

$secrets = [$password, 'p%40ss%3Aw%2Frd', 'wrongPASS123'];
function leaks(string $text, array $secrets): array
{
    return array_values(array_filter($secrets, fn($s) => str_contains($text, $s)));
}
function dump_all(mixed $v): string
{
    ob_start();
    var_dump($v);
    print_r($v);
    echo "\n";
    var_export($v);
    echo "\n";
    return ob_get_clean();
}

$bad = new RedisLock($key, 5, "redis://:wrongPASS123@127.0.0.1:$port");
try {
    $bad->acquire();
    echo "acquired with a wrong password\n";
} catch (RedisLock\ConnectionException $e) {
    echo str_replace((string) $port, 'PORT', $e->getMessage()), "\n";
    $text = $e->getMessage() . "\n" . $e->getTraceAsString() . "\n" . $e . "\n" . dump_all($e) . dump_all($bad);
    echo "leaks: ", json_encode(leaks($text, $secrets)), "\n";
    echo str_contains(dump_all($bad), "redis://:***@127.0.0.1:$port/0") ? "masked url shown\n" : "masked url missing\n";
}

$none = new RedisLock($key, 5, "redis://127.0.0.1:$port");
try {
    $none->acquire();
    echo "acquired without a password\n";
} catch (RedisLock\ConnectionException $e) {
    echo str_replace((string) $port, 'PORT', $e->getMessage()), "\n";
}
try {
    $none->isAcquired();
    echo "isAcquired without holding: no round trip\n";
} catch (RedisLock\ConnectionException $e) {
    echo "isAcquired threw\n";
}

// The good lock still works after the failures (nothing was poisoned).
var_dump($lock->acquire());
ob_start();
var_dump($lock);
print_r($lock);
var_export($lock);
$out = ob_get_clean();
echo "leaks in dumps of the good lock: ", json_encode(leaks($out, $secrets)), "\n";
echo str_contains($out, "redis://:***@127.0.0.1:$port/0") ? "masked url shown\n" : "masked url missing\n";
var_dump($lock->release());
?>
--EXPECTF--
bool(true)
bool(true)
bool(true)
bool(true)
int(0)
Redis redis://:***@127.0.0.1:PORT/0: authentication failed: %s
leaks: []
masked url shown
Redis redis://127.0.0.1:PORT/0: authentication failed: %s
isAcquired without holding: no round trip
bool(true)
leaks in dumps of the good lock: []
masked url shown
bool(true)

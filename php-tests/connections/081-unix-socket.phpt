--TEST--
unix:///path?db=N: a lock over a unix socket works and lives in the chosen database
--EXTENSIONS--
redislock
--SKIPIF--
<?php require __DIR__ . '/../skipif.inc'; ?>
--FILE--
<?php
require __DIR__ . '/../config.inc';
$dir = sys_get_temp_dir() . '/rl-uds-' . getmypid() . '-' . bin2hex(random_bytes(3));
mkdir($dir, 0700);
$sock = "$dir/r.sock";
$redis = TestRedis::start(['--unixsocket', $sock, '--unixsocketperm', '700']);
$tcp = $redis->url();
$key = redislock_test_key('unix');
$inDb = fn(int $db) => redis_cmd($tcp, 'EVAL', "redis.call('select', ARGV[1]) return redis.call('get', KEYS[1])", '1', $key, (string) $db);

$lock = new RedisLock($key, 5, "unix://$sock?db=3");
var_dump($lock->acquire());
var_dump($inDb(3) === $lock->token());
var_dump($inDb(0));
$pttl = redis_cmd($tcp, 'EVAL', "redis.call('select', 3) return redis.call('pttl', KEYS[1])", '1', $key);
var_dump($pttl > 4000 && $pttl <= 5000);
// The connection really is a unix socket one.
$clients = redis_cmd($tcp, 'CLIENT', 'LIST');
var_dump((bool) preg_match('/ addr=\S*r\.sock\S* .* db=3 /', $clients) || (bool) preg_match('/ laddr=\S*r\.sock\S* .* db=3 /', $clients));
// The same key over TCP in db 3 is taken; in db 0 over the socket it is free.
$overTcp = new RedisLock($key, 5, "$tcp/3");
var_dump($overTcp->acquire());
$db0 = new RedisLock($key, 5, "unix://$sock");
var_dump($db0->acquire());
var_dump($inDb(0) === $db0->token());
var_dump($db0->release());
var_dump($lock->isAcquired());
var_dump($lock->release());
var_dump($inDb(3));
// A socket path that does not exist: ConnectionException naming it.
$missing = new RedisLock($key, 5, "unix://$dir/missing.sock?db=1");
try {
    $missing->acquire();
    echo "acquired on a missing socket\n";
} catch (RedisLock\ConnectionException $e) {
    echo str_replace($dir, 'DIR', $e->getMessage()), "\n";
}
unset($redis);
@unlink($sock);
@rmdir($dir);
?>
--EXPECTF--
bool(true)
bool(true)
NULL
bool(true)
bool(true)
bool(false)
bool(true)
bool(true)
bool(true)
bool(true)
bool(true)
NULL
Redis unix://DIR/missing.sock?db=1: unreachable: %s

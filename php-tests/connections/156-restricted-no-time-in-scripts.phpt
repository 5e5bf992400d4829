--TEST--
restricted servers: with TIME refused inside scripts (as on ElastiCache Serverless), blocking waits, hand-overs, fencing and dead-waiter clean-up work
--EXTENSIONS--
redislock
--SKIPIF--
<?php require __DIR__ . '/../skipif.inc'; ?>
--FILE--
<?php
require __DIR__ . '/../config.inc';
require __DIR__ . '/../children.inc';
$redis = TestRedis::start(['--rename-command', 'TIME', '']);
$url = $redis->url();
$key = redislock_test_key('no-time');
var_dump(redis_cmd($url, 'EVAL', "return redis.call('TIME')", '0'));

$lock = new RedisLock($key, 10, $url, ['fencing' => true]);
var_dump($lock->acquire());
$first = $lock->fencingToken();
$waiter = spawn_php(sprintf('
    $l = new RedisLock(%s, 10, %s, ["fencing" => true, "retry_delay" => 0.2]);
    echo "waiting\n";
    $got = $l->acquire(5.0);
    echo json_encode(["got" => $got, "fence" => $l->fencingToken()]), "\n";
    $l->release();',
    var_export($key, true), var_export($url, true)));
check('waiter queued', read_line($waiter) === 'waiting' && wait_until(fn () => redis_cmd($url, 'ZCARD', $key . '~~q') === 1));
var_dump($lock->release());
$r = json_decode(read_line($waiter), true);
check('handed over with a greater fencing token', ($r['got'] ?? null) === true && ($r['fence'] ?? 0) > $first, json_encode($r));
finish_php($waiter);

// A wait that times out and leaves the queue, on the same server.
var_dump($lock->acquire());
$other = spawn_php(sprintf('
    $l = new RedisLock(%s, 10, %s, ["retry_delay" => 0.1]);
    var_dump($l->acquire(0.4));',
    var_export($key, true), var_export($url, true)));
[$code, $out] = finish_php($other);
echo $out;
var_dump($lock->release());
var_dump(redis_cmd($url, 'EXISTS', $key, $key . '~~q') + count(redis_cmd($url, 'KEYS', $key . '~~[aw]~*')));
?>
--EXPECTF--
array(1) {
  ["error"]=>
  string(%d) "%s"
}
bool(true)
waiter queued: ok
bool(true)
handed over with a greater fencing token: ok
bool(true)
bool(false)
bool(true)
int(0)

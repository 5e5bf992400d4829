--TEST--
Read holds: bad $wait is a ValueError / TypeError; fencing, owner, replicas, on_lost => "interrupt", Redlock and servers without scripts are refused with a LockException; nothing is sent to Redis for either
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
$key = redislock_test_key('read-refused');
function commands_processed(string $url): int
{
    preg_match('/^total_commands_processed:(\d+)/m', redis_cmd($url, 'INFO', 'stats'), $m);
    return (int) $m[1];
}
$show = fn (callable $f) => show_outcome($f, fn ($r) => 'returned ' . var_export($r, true));
$mask = fn (callable $f) => function () use ($f, $key) {
    try {
        return $f();
    } catch (Throwable $e) {
        throw new (get_class($e))(str_replace($key, 'KEY', $e->getMessage()));
    }
};

echo "-- bad arguments\n";
$lock = new RedisLock($key, 10, $url);
$before = commands_processed($url);
$show(fn () => $lock->acquireRead(-1));
$show(fn () => $lock->acquireRead(-0.001));
$show(fn () => $lock->acquireRead(NAN));
$show(fn () => $lock->acquireRead(INF));
$show(fn () => $lock->acquireRead(31536001));
$show(fn () => $lock->acquireRead('soon'));
$show(fn () => $lock->acquireRead(null));
$show(fn () => $lock->acquireRead([]));
check('nothing sent', commands_processed($url) - $before === 1);

echo "-- refused options\n";
$before = commands_processed($url);
foreach ([
    ['fencing' => true],
    ['owner' => 'worker-1'],
    ['replicas' => 1],
    ['on_lost' => 'interrupt', 'auto_renew' => true],
] as $options) {
    $refused = new RedisLock($key, 10, $url, $options);
    $show($mask(fn () => $refused->acquireRead()));
    $show($mask(fn () => $refused->acquireRead(1.0)));
}
check('nothing sent', commands_processed($url) - $before === 1);
check('nothing written', redis_cmd($url, 'KEYS', '*') === []);

echo "-- Redlock (refused before it connects anywhere)\n";
$redlock = new RedisLock($key, 10, [$url, 'redis://127.0.0.1:1', 'redis://127.0.0.1:2']);
$before = commands_processed($url);
$show($mask(fn () => $redlock->acquireRead()));
check('nothing sent', commands_processed($url) - $before === 1);

echo "-- a server that refuses scripts\n";
$scriptless = TestRedis::start(['--rename-command', 'EVAL', '', '--rename-command', 'EVALSHA', '']);
$refused = new RedisLock($key, 10, $scriptless->url());
try {
    $refused->acquireRead(1.0);
    echo "returned\n";
} catch (RedisLock\LockException $e) {
    echo get_class($e), preg_match('/refuses EVALSHA\b/', $e->getMessage()) ? ' naming EVALSHA' : ': ' . $e->getMessage(), "\n";
}
check('nothing written', redis_cmd($scriptless->url(), 'KEYS', '*') === []);

echo "-- a refused demotion keeps the write hold\n";
$fenced = new RedisLock($key, 10, $url, ['fencing' => true]);
check('writes', $fenced->acquire() && is_int($fenced->fencingToken()));
$token = $fenced->token();
$show($mask(fn () => $fenced->acquireRead()));
check('still writes', $fenced->isAcquired() && redis_cmd($url, 'GET', $key) === $token);
check('released', $fenced->release());

echo "-- the same object still reads with good arguments\n";
check('reads', $lock->acquireRead(0.0) && $lock->isAcquired());
check('released', $lock->release());
?>
--EXPECT--
-- bad arguments
ValueError: RedisLock::acquireRead(): Argument #1 ($wait) must be greater than or equal to 0
ValueError: RedisLock::acquireRead(): Argument #1 ($wait) must be greater than or equal to 0
ValueError: RedisLock::acquireRead(): Argument #1 ($wait) must be a number, NaN given
ValueError: RedisLock::acquireRead(): Argument #1 ($wait) must be finite
ValueError: RedisLock::acquireRead(): Argument #1 ($wait) must be at most 31536000 seconds (one year)
TypeError: RedisLock::acquireRead(): Argument #1 ($wait) must be of type float, string given
TypeError: RedisLock::acquireRead(): Argument #1 ($wait) must be of type float, null given
TypeError: RedisLock::acquireRead(): Argument #1 ($wait) must be of type float, array given
nothing sent: ok
-- refused options
RedisLock\LockException: acquireRead() on lock "KEY": option "fencing" is for exclusive holds (a fencing token orders writers; readers share one state); use a lock object without "fencing" to read; no read hold was taken
RedisLock\LockException: acquireRead() on lock "KEY": option "fencing" is for exclusive holds (a fencing token orders writers; readers share one state); use a lock object without "fencing" to read; no read hold was taken
RedisLock\LockException: acquireRead() on lock "KEY": option "owner" names one holder, and every reader needs a token of its own; no read hold was taken
RedisLock\LockException: acquireRead() on lock "KEY": option "owner" names one holder, and every reader needs a token of its own; no read hold was taken
RedisLock\LockException: acquireRead() on lock "KEY": option "replicas" is not supported for read holds yet; no read hold was taken
RedisLock\LockException: acquireRead() on lock "KEY": option "replicas" is not supported for read holds yet; no read hold was taken
RedisLock\LockException: acquireRead() on lock "KEY": option "on_lost" => "interrupt" is for exclusive holds; check isAcquired() while reading; no read hold was taken
RedisLock\LockException: acquireRead() on lock "KEY": option "on_lost" => "interrupt" is for exclusive holds; check isAcquired() while reading; no read hold was taken
nothing sent: ok
nothing written: ok
-- Redlock (refused before it connects anywhere)
RedisLock\LockException: acquireRead() on lock "KEY": read holds do not run over several independent servers (Redlock): counting readers needs one server that decides; use one server, Sentinel or Cluster; no read hold was taken
nothing sent: ok
-- a server that refuses scripts
RedisLock\LockException naming EVALSHA
nothing written: ok
-- a refused demotion keeps the write hold
writes: ok
RedisLock\LockException: acquireRead() on lock "KEY": option "fencing" is for exclusive holds (a fencing token orders writers; readers share one state); use a lock object without "fencing" to read; no read hold was taken
still writes: ok
released: ok
-- the same object still reads with good arguments
reads: ok
released: ok

--TEST--
A server that can lose a held lock by itself: an evicting maxmemory hands a held lock to a second process (every evicting policy); unsafe_server "warn" flags it (unsafeServers(), stats(), metrics(), inspect(), phpinfo()), "refuse" takes nothing and says why; a safe server is neither
--EXTENSIONS--
redislock
--SKIPIF--
<?php require __DIR__ . '/../skipif.inc'; ?>
--FILE--
<?php
require __DIR__ . '/../config.inc';
require __DIR__ . '/../children.inc';

/** Writes 10 KB values until $key is gone (evicted), at most 3,000. */
function fill_until_gone(string $url, string $key): bool
{
    $value = str_repeat('x', 10240);
    for ($i = 0; $i < 3000; $i++) {
        redis_cmd($url, 'SET', "cache:$i", $value);
        if ($i % 50 === 49 && redis_cmd($url, 'EXISTS', $key) === 0) {
            return true;
        }
    }
    return redis_cmd($url, 'EXISTS', $key) === 0;
}

echo "-- warn (the default): the lock is taken, the server flagged; eviction really hands it on\n";
foreach (['allkeys-lru', 'allkeys-lfu', 'allkeys-random', 'volatile-lru', 'volatile-lfu', 'volatile-random', 'volatile-ttl'] as $policy) {
    $redis = TestRedis::start(['--maxmemory', '4mb', '--maxmemory-policy', $policy, '--appendonly', 'yes']);
    $url = $redis->url();
    $key = redislock_test_key("evict-$policy");
    $holder = new RedisLock($key, 30, $url, ['auto_renew' => true]);
    $taken = $holder->acquire();
    $flagged = array_values(array_filter(RedisLock::unsafeServers(), fn ($u) => $u['server'] === "$url/0"));
    $evicted = fill_until_gone($url, $key);
    $second = new RedisLock($key, 30, $url, ['reentrant' => false]);
    printf("%-15s taken %s, flagged %s, evicted %s, a second process takes it %s while the holder believes %s\n",
        $policy, json_encode($taken), json_encode(array_column($flagged, 'reason')), json_encode($evicted),
        json_encode($second->acquire()), json_encode($holder->isAcquired()));
    $second->release();
    $holder->release();
    unset($redis);
}

echo "-- what warn shows\n";
$redis = TestRedis::start(['--maxmemory', '64mb', '--maxmemory-policy', 'volatile-lru', '--appendonly', 'yes']);
$url = $redis->url();
$lock = new RedisLock(redislock_test_key('shown'), 10, $url);
$lock->acquire();
$lock->acquire();
$mine = fn (array $rows) => array_values(array_filter($rows, fn ($u) => $u['server'] === "$url/0"));
$rows = $mine(RedisLock::unsafeServers());
check('recorded once, with its fix', count($rows) === 1 && $rows[0]['reason'] === 'eviction'
    && str_contains($rows[0]['detail'], 'maxmemory-policy volatile-lru') && str_contains($rows[0]['detail'], 'noeviction'));
check('stats() lists it', $mine(RedisLock::stats('process')['unsafe_servers']) === $rows);
check('metrics() has the gauge', str_contains(RedisLock::metrics(), "redislock_server_unsafe{server=\"$url/0\",reason=\"eviction\"} 1"));
$seen = RedisLock::inspect(redislock_test_key('shown'), $url);
check('inspect() names it', array_column($seen['unsafe'], 'reason') === ['eviction']);
ob_start();
phpinfo(INFO_MODULES);
check('phpinfo() shows it', str_contains(ob_get_clean(), 'eviction'));
$lock->release();

echo "-- refuse: nothing taken, the setting and the fix named\n";
$refusing = new RedisLock(redislock_test_key('refused'), 10, $url, ['unsafe_server' => 'refuse']);
try {
    $refusing->acquire();
    echo "acquired\n";
} catch (RedisLock\LockException $e) {
    echo get_class($e), ': ', $e->getMessage(), "\n";
}
check('no key written', redis_cmd($url, 'EXISTS', redislock_test_key('refused')) === 0);
check('ini redislock.unsafe_server=refuse refuses too', (function () use ($url) {
    $child = redislock_run_child('$l = new RedisLock("ini-refused", 5, ' . var_export($url, true) . ');
        try { $l->acquire(); echo "acquired"; } catch (RedisLock\LockException $e) { echo "refused"; }',
        ['redislock.unsafe_server' => 'refuse']);
    return trim($child[1]) === 'refused';
})());
unset($redis);

echo "-- no append-only file\n";
$redis = TestRedis::start(['--appendonly', 'no']);
$l = new RedisLock(redislock_test_key('no-aof'), 10, $redis->url(), ['unsafe_server' => 'refuse']);
try {
    $l->acquire();
    echo "acquired\n";
} catch (RedisLock\LockException $e) {
    echo str_contains($e->getMessage(), 'aof_enabled:0') && str_contains($e->getMessage(), 'appendonly yes') ? "refused: no_aof, fix named\n" : $e->getMessage() . "\n";
}
unset($redis);

echo "-- a safe server\n";
$redis = TestRedis::start(['--maxmemory', '64mb', '--maxmemory-policy', 'noeviction', '--appendonly', 'yes']);
$url = $redis->url();
$l = new RedisLock(redislock_test_key('safe'), 10, $url, ['unsafe_server' => 'refuse']);
var_dump($l->acquire());
check('not listed', array_filter(RedisLock::unsafeServers(), fn ($u) => $u['server'] === "$url/0") === [] && RedisLock::inspect(redislock_test_key('safe'), $url)['unsafe'] === []);
$l->release();

echo "-- bad values\n";
try {
    new RedisLock('k', 1, $url, ['unsafe_server' => 'sometimes']);
} catch (ValueError $e) {
    echo $e->getMessage(), "\n";
}
?>
--EXPECTF--
-- warn (the default): the lock is taken, the server flagged; eviction really hands it on
allkeys-lru     taken true, flagged ["eviction"], evicted true, a second process takes it true while the holder believes true
allkeys-lfu     taken true, flagged ["eviction"], evicted true, a second process takes it true while the holder believes true
allkeys-random  taken true, flagged ["eviction"], evicted true, a second process takes it true while the holder believes true
volatile-lru    taken true, flagged ["eviction"], evicted true, a second process takes it true while the holder believes true
volatile-lfu    taken true, flagged ["eviction"], evicted true, a second process takes it true while the holder believes true
volatile-random taken true, flagged ["eviction"], evicted true, a second process takes it true while the holder believes true
volatile-ttl    taken true, flagged ["eviction"], evicted true, a second process takes it true while the holder believes true
-- what warn shows
recorded once, with its fix: ok
stats() lists it: ok
metrics() has the gauge: ok
inspect() names it: ok
phpinfo() shows it: ok
-- refuse: nothing taken, the setting and the fix named
RedisLock\LockException: option "unsafe_server" is "refuse" (ini redislock.unsafe_server), and a server can lose a held lock by itself, so no lock was taken: redis://127.0.0.1:%d/0: maxmemory 67108864 with maxmemory-policy volatile-lru: %s; set maxmemory-policy noeviction, or keep locks on a Redis of their own (or set unsafe_server to "warn" to take locks there all the same)
no key written: ok
ini redislock.unsafe_server=refuse refuses too: ok
-- no append-only file
refused: no_aof, fix named
-- a safe server
bool(true)
not listed: ok
-- bad values
%s"unsafe_server"%s

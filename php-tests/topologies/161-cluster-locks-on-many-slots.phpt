--TEST--
cluster: locks on many slots through one seed node land on their slot's master, in a hash tag after the prefix
--EXTENSIONS--
redislock
--SKIPIF--
<?php require __DIR__ . '/../skipif.inc'; ?>
--FILE--
<?php
require __DIR__ . '/../cluster.inc';
require __DIR__ . '/../children.inc';
$nodes = test_redis_cluster(3);
$seed = $nodes[1]->url();
$masters = [];
$misplaced = 0;
for ($i = 0; $i < 40; $i++) {
    $key = redislock_test_key("cluster-$i");
    $lock = new RedisLock($key, 10, $seed, ['cluster' => true, 'prefix' => 'app:']);
    if (!$lock->acquire()) { echo "not acquired\n"; continue; }
    $name = "app:{{$key}}";
    $master = test_cluster_master($nodes, $name);
    $masters[$master->port] = true;
    if (redis_cmd($master->url(), 'GET', $name) !== $lock->token()) { $misplaced++; }
    if ($i === 0) {
        check('the stored key is prefix{key}', ($lock->__debugInfo()["redisKey"] ?? null) === "app:{{$key}}");
    }
    $lock->release();
    if (redis_cmd($master->url(), 'EXISTS', $name) !== 0) { $misplaced++; }
}
check('every lock was on its master', $misplaced === 0, "$misplaced misplaced");
check('all three masters served locks', count($masters) === 3, count($masters) . ' masters');
$tagged = new RedisLock('{tenant7}:report', 10, $seed, ['cluster' => true, 'prefix' => 'app:']);
check('a key with its own tag keeps it', $tagged->acquire() && redis_cmd(test_cluster_master($nodes, 'app:{tenant7}:report')->url(), 'EXISTS', 'app:{tenant7}:report') === 1);
$tagged->release();
?>
--EXPECT--
the stored key is prefix{key}: ok
every lock was on its master: ok
all three masters served locks: ok
a key with its own tag keeps it: ok

--TEST--
replicas: an acquire that too few replicas acknowledge throws ConnectionException with the count and leaves nothing; a replica in sync acknowledges
--EXTENSIONS--
redislock
--SKIPIF--
<?php require __DIR__ . '/../skipif.inc'; ?>
--FILE--
<?php
require __DIR__ . '/../config.inc';
require __DIR__ . '/../children.inc';
$master = TestRedis::start(['--repl-diskless-sync-delay', '0']);
$key = redislock_test_key('replicas');
$lock = new RedisLock($key, 10, $master->url(), ['replicas' => 1, 'read_timeout' => 2]);
try {
    $lock->acquire();
    echo "acquired without a replica\n";
} catch (RedisLock\ConnectionException $e) {
    echo preg_replace('/within \d+ ms/', 'within N ms', $e->getMessage()), "\n";
}
check('nothing left', redis_cmd($master->url(), 'EXISTS', $key) === 0);
check('not held', !$lock->isAcquired());

$replica = TestRedis::start(['--replicaof', '127.0.0.1', (string) $master->port]);
// In sync, and counted as online by the master (WAIT counts only those).
wait_until(fn () => str_contains((string) redis_cmd($replica->url(), 'INFO', 'replication'), 'master_link_status:up')
    && str_contains((string) redis_cmd($master->url(), 'INFO', 'replication'), 'state=online'), 20);
// WAIT gets 3/4 of read_timeout: generous, for a busy machine.
$lock = new RedisLock($key, 10, $master->url(), ['replicas' => 1, 'read_timeout' => 4]);
check('acquired once a replica acknowledges', $lock->acquire());
check('the token is on the replica', redis_cmd($replica->url(), 'GET', $key) === $lock->token());
check('released', $lock->release());
?>
--EXPECTF--
Redis redis://127.0.0.1:%d/0: not replicated: only 0 of 1 replicas acknowledged within N ms
nothing left: ok
not held: ok
acquired once a replica acknowledges: ok
the token is on the replica: ok
released: ok

--TEST--
auth: an ACL user with redis://user:pass@host works; a wrong password or unknown user fails without revealing it
--EXTENSIONS--
redislock
--SKIPIF--
<?php require __DIR__ . '/../skipif.inc'; ?>
--FILE--
<?php
require __DIR__ . '/../config.inc';
$redis = TestRedis::start();
$admin = $redis->url();
$port = $redis->port;
// A user with a password needing encoding.
var_dump(redis_cmd($admin, 'ACL', 'SETUSER', 'locker', 'on', '>s3cr#t&pw', '~*', '&*', '+@all'));
$userUrl = "redis://locker:s3cr%23t%26pw@127.0.0.1:$port";
$key = 'lk:' . redislock_test_key('acl');

$lock = new RedisLock($key, 5, $userUrl);
var_dump($lock->acquire());
var_dump(redis_cmd($admin, 'GET', $key) === $lock->token());
// The connection really is the ACL user's.
$clients = redis_cmd($admin, 'CLIENT', 'LIST');
var_dump((bool) preg_match('/ user=locker /', $clients));
var_dump($lock->release());
var_dump(redis_cmd($admin, 'EXISTS', $key));

$wrong = new RedisLock($key, 5, "redis://locker:wrongPW99@127.0.0.1:$port");
try {
    $wrong->acquire();
    echo "acquired with a wrong password\n";
} catch (RedisLock\ConnectionException $e) {
    echo str_replace((string) $port, 'PORT', $e->getMessage()), "\n";
    ob_start();
    var_dump($wrong);
    print_r($wrong);
    echo $e;
    $out = ob_get_clean();
    echo str_contains($out, 'wrongPW99') || str_contains($out, 's3cr') ? "LEAK\n" : "no leak\n";
    echo str_contains($out, "redis://locker:***@127.0.0.1:$port/0") ? "masked url shown\n" : "masked url missing\n";
}
// Unknown user.
$ghost = new RedisLock($key, 5, "redis://ghost:s3cr%23t%26pw@127.0.0.1:$port");
try {
    $ghost->acquire();
    echo "acquired as an unknown user\n";
} catch (RedisLock\ConnectionException $e) {
    echo str_replace((string) $port, 'PORT', $e->getMessage()), "\n";
}
?>
--EXPECTF--
string(2) "OK"
bool(true)
bool(true)
bool(true)
bool(true)
int(0)
Redis redis://locker:***@127.0.0.1:PORT/0: authentication failed: %s
no leak
masked url shown
Redis redis://ghost:***@127.0.0.1:PORT/0: authentication failed: %s

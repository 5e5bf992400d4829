--TEST--
password with an unencoded '/', '?', '#' or '%': a ValueError says to URL-encode it (never echoing it); rawurlencode() makes it work
--EXTENSIONS--
redislock
--SKIPIF--
<?php require __DIR__ . '/../skipif.inc'; ?>
--FILE--
<?php
require __DIR__ . '/../config.inc';
$password = 'Zq9/x?y#z%w@v:u,t';
$redis = TestRedis::start(['--requirepass', $password]);
$port = $redis->port;

$raw = [
    "redis://:$password@127.0.0.1:$port",
    "redis://default:$password@127.0.0.1:$port/0",
    "rediss://:$password@127.0.0.1:$port",
    "redis://:Zq9/x@127.0.0.1:$port",
    "redis://:Zq9?x@127.0.0.1:$port",
    "redis://:Zq9#x@127.0.0.1:$port",
    "redis://:Zq9%x@127.0.0.1:$port",
];
foreach ($raw as $url) {
    try {
        new RedisLock('k133', 5, $url);
        echo "accepted\n";
    } catch (ValueError $e) {
        $m = $e->getMessage();
        echo str_replace((string) $port, 'PORT', $m), "\n";
        if (str_contains($m, 'Zq9')) {
            echo "LEAK\n";
        }
    }
}

// The advice works: rawurlencode() the password.
$url = 'redis://:' . rawurlencode($password) . "@127.0.0.1:$port";
$lock = new RedisLock(redislock_test_key('slash'), 5, $url);
var_dump($lock->acquire());
var_dump($lock->release());
$url = 'redis://default:' . rawurlencode($password) . "@127.0.0.1:$port/1";
$lock = new RedisLock(redislock_test_key('slash'), 5, $url);
var_dump($lock->acquire());
var_dump($lock->release());
?>
--EXPECT--
RedisLock::__construct(): Argument #3 ($servers) has a malformed server URL "redis://:***@127.0.0.1:PORT": the user name or password contains an unencoded '/', '?' or '#'; URL-encode the user name and password, e.g. with rawurlencode()
RedisLock::__construct(): Argument #3 ($servers) has a malformed server URL "redis://default:***@127.0.0.1:PORT/0": the user name or password contains an unencoded '/', '?' or '#'; URL-encode the user name and password, e.g. with rawurlencode()
RedisLock::__construct(): Argument #3 ($servers) has a malformed server URL "rediss://:***@127.0.0.1:PORT": the user name or password contains an unencoded '/', '?' or '#'; URL-encode the user name and password, e.g. with rawurlencode()
RedisLock::__construct(): Argument #3 ($servers) has a malformed server URL "redis://:***@127.0.0.1:PORT": the user name or password contains an unencoded '/', '?' or '#'; URL-encode the user name and password, e.g. with rawurlencode()
RedisLock::__construct(): Argument #3 ($servers) has a malformed server URL "redis://:***@127.0.0.1:PORT": the user name or password contains an unencoded '/', '?' or '#'; URL-encode the user name and password, e.g. with rawurlencode()
RedisLock::__construct(): Argument #3 ($servers) has a malformed server URL "redis://:***@127.0.0.1:PORT": the user name or password contains an unencoded '/', '?' or '#'; URL-encode the user name and password, e.g. with rawurlencode()
RedisLock::__construct(): Argument #3 ($servers) has a malformed server URL "redis://:***@127.0.0.1:PORT": invalid %-escape in the user name or password; URL-encode the user name and password, e.g. with rawurlencode()
bool(true)
bool(true)
bool(true)
bool(true)

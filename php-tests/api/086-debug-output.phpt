--TEST--
var_dump() / print_r() of a lock show key, redisKey, ttl, servers (password masked), acquired, shared (a read hold), token (masked: a bearer secret, as an owner label) and holdCount
--EXTENSIONS--
redislock
--SKIPIF--
<?php require __DIR__ . '/../skipif.inc'; redislock_skip_unless_single('var_dumps a lock on one password-protected server of its own'); ?>
--FILE--
<?php
require __DIR__ . '/../config.inc';
$redis = TestRedis::start(['--requirepass', 'dbgSecret']);
$port = $redis->port;
$lock = new RedisLock("dbg\0key", 2.5, "redis://:dbgSecret@127.0.0.1:$port/2", ['prefix' => 'p:']);
ob_start();
var_dump($lock);
var_dump($lock->acquire(), $lock->acquire());
var_dump($lock);
print_r($lock);
echo "\n";
var_dump($lock->release());
print_r($lock);
echo "\n";
var_dump($lock->release());
var_dump($lock);
var_dump($lock->acquireRead());
print_r($lock);
echo "\n";
var_dump($lock->release());
$out = ob_get_clean();
echo str_replace((string) $port, "PORT", $out);
echo str_contains($out, 'dbgSecret') ? "LEAK\n" : "no leak\n";
?>
--EXPECTF--
object(RedisLock)#%d (8) {
  ["key"]=>
  string(7) "dbg%0key"
  ["redisKey"]=>
  string(9) "p:dbg%0key"
  ["ttl"]=>
  float(2.5)
  ["servers"]=>
  array(1) {
    [0]=>
    string(%d) "redis://:***@127.0.0.1:PORT/2"
  }
  ["acquired"]=>
  bool(false)
  ["shared"]=>
  bool(false)
  ["token"]=>
  NULL
  ["holdCount"]=>
  int(0)
}
bool(true)
bool(true)
object(RedisLock)#%d (8) {
  ["key"]=>
  string(7) "dbg%0key"
  ["redisKey"]=>
  string(9) "p:dbg%0key"
  ["ttl"]=>
  float(2.5)
  ["servers"]=>
  array(1) {
    [0]=>
    string(%d) "redis://:***@127.0.0.1:PORT/2"
  }
  ["acquired"]=>
  bool(true)
  ["shared"]=>
  bool(false)
  ["token"]=>
  string(3) "***"
  ["holdCount"]=>
  int(2)
}
RedisLock Object
(
    [key] => dbg%0key
    [redisKey] => p:dbg%0key
    [ttl] => 2.5
    [servers] => Array
        (
            [0] => redis://:***@127.0.0.1:PORT/2
        )

    [acquired] => 1
    [shared] => 
    [token] => ***
    [holdCount] => 2
)

bool(true)
RedisLock Object
(
    [key] => dbg%0key
    [redisKey] => p:dbg%0key
    [ttl] => 2.5
    [servers] => Array
        (
            [0] => redis://:***@127.0.0.1:PORT/2
        )

    [acquired] => 1
    [shared] => 
    [token] => ***
    [holdCount] => 1
)

bool(true)
object(RedisLock)#%d (8) {
  ["key"]=>
  string(7) "dbg%0key"
  ["redisKey"]=>
  string(9) "p:dbg%0key"
  ["ttl"]=>
  float(2.5)
  ["servers"]=>
  array(1) {
    [0]=>
    string(%d) "redis://:***@127.0.0.1:PORT/2"
  }
  ["acquired"]=>
  bool(false)
  ["shared"]=>
  bool(false)
  ["token"]=>
  NULL
  ["holdCount"]=>
  int(0)
}
bool(true)
RedisLock Object
(
    [key] => dbg%0key
    [redisKey] => p:dbg%0key
    [ttl] => 2.5
    [servers] => Array
        (
            [0] => redis://:***@127.0.0.1:PORT/2
        )

    [acquired] => 1
    [shared] => 1
    [token] => 
    [holdCount] => 1
)

bool(true)
no leak

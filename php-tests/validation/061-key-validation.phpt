--TEST--
key validation: an empty key is a ValueError; a binary key with NUL bytes works end to end
--EXTENSIONS--
redislock
--SKIPIF--
<?php require __DIR__ . '/../skipif.inc'; ?>
--FILE--
<?php
require __DIR__ . '/../config.inc';
$url = redislock_test_url();
try {
    new RedisLock('', 5, $url);
    echo "empty key accepted\n";
} catch (ValueError $e) {
    echo $e->getMessage(), "\n";
}
try {
    RedisLock::restore('', 'tok', 5, $url);
    echo "empty key accepted by restore\n";
} catch (ValueError $e) {
    echo $e->getMessage(), "\n";
}
$key = redislock_test_key('bin') . "\0mid\0\xff\xfe\r\n end\0";
$lock = new RedisLock($key, 5, $url);
var_dump($lock->key() === $key);
var_dump($lock->acquire());
$token = $lock->token();
// The key in Redis is exactly these bytes, value the token.
var_dump(redis_cmd($url, 'GET', $key) === $token);
// A key cut at the first NUL must not exist.
var_dump(redis_cmd($url, 'EXISTS', substr($key, 0, strpos($key, "\0"))));
var_dump($lock->isAcquired());
// Another object on the same binary key sees it as taken by us (reentrant)
// while a different key that only differs after a NUL is independent.
$other = new RedisLock(substr($key, 0, -1) . "\1", 5, $url);
var_dump($other->acquire());
var_dump($other->release());
var_dump($lock->release());
var_dump(redis_cmd($url, 'EXISTS', $key));
?>
--EXPECT--
RedisLock::__construct(): Argument #1 ($key) must not be empty
RedisLock::restore(): Argument #1 ($key) must not be empty
bool(true)
bool(true)
bool(true)
int(0)
bool(true)
bool(true)
bool(true)
bool(true)
int(0)

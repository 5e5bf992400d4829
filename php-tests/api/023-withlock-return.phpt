--TEST--
withLock() passes the lock to the callback, holds the key while it runs, returns its value and releases
--EXTENSIONS--
redislock
--SKIPIF--
<?php require __DIR__ . '/../skipif.inc'; ?>
--FILE--
<?php
require __DIR__ . '/../config.inc';
$url = redislock_test_url();
$key = redislock_test_key('withlock');

$lock = redislock_test_lock($key, 10);
$calls = 0;
$r = $lock->withLock(function ($arg) use ($lock, $url, $key, &$calls) {
    $calls++;
    var_dump(func_num_args());
    var_dump($arg === $lock);
    var_dump(redis_cmd($url, 'GET', redislock_test_stored_key($key)) === $lock->token());
    return ['answer' => 42, 'list' => [1, 2]];
});
var_dump($calls);
var_dump($r);
var_dump(redis_cmd($url, 'EXISTS', redislock_test_stored_key($key)));
var_dump($lock->token());

// Objects come back as the same instance; null and false are values too.
$obj = new stdClass();
var_dump($lock->withLock(fn () => $obj) === $obj);
var_dump($lock->withLock(fn () => null));
var_dump($lock->withLock(fn () => false));
var_dump(redis_cmd($url, 'EXISTS', redislock_test_stored_key($key)));

// Any callable.
final class Job
{
    public function run(RedisLock $l): string { return 'job:' . $l->key(); }
    public static function stat(RedisLock $l): int { return strlen($l->token()); }
}
var_dump($lock->withLock([new Job(), 'run']) === 'job:' . $key);
var_dump($lock->withLock('Job::stat'));
var_dump(redis_cmd($url, 'EXISTS', redislock_test_stored_key($key)));
?>
--EXPECT--
int(1)
bool(true)
bool(true)
int(1)
array(2) {
  ["answer"]=>
  int(42)
  ["list"]=>
  array(2) {
    [0]=>
    int(1)
    [1]=>
    int(2)
  }
}
int(0)
NULL
bool(true)
NULL
bool(false)
int(0)
bool(true)
int(32)
int(0)

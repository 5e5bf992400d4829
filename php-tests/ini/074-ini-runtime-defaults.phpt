--TEST--
php.ini defaults set with ini_set() at runtime: servers, prefix and default_ttl are used by new locks; arguments override them
--EXTENSIONS--
redislock
--SKIPIF--
<?php require __DIR__ . '/../skipif.inc'; ?>
--FILE--
<?php
require __DIR__ . '/../config.inc';
$url = redislock_test_url();
$key = redislock_test_key('ini');
var_dump(ini_set('redislock.servers', $url));
var_dump(ini_set('redislock.prefix', 'pfx:'));
var_dump(ini_set('redislock.default_ttl', '7'));

$lock = new RedisLock($key);
var_dump($lock->key() === $key);
var_dump($lock->acquire());
var_dump(redis_cmd($url, 'GET', "pfx:$key") === $lock->token());
var_dump(redis_cmd($url, 'EXISTS', $key));
$pttl = redis_cmd($url, 'PTTL', "pfx:$key");
var_dump($pttl > 6500 && $pttl <= 7000);
$info = $lock->__debugInfo();
var_dump($info['redisKey'] === "pfx:$key", $info['ttl']);
var_dump($lock->release());

// null arguments mean "the ini value" too.
$lock = new RedisLock($key, null, null);
var_dump($lock->__debugInfo()['ttl']);
// Explicit arguments and options win over ini.
$lock = new RedisLock($key, 2, $url, ['prefix' => 'own:']);
var_dump($lock->acquire());
var_dump(redis_cmd($url, 'EXISTS', "own:$key"));
$pttl = redis_cmd($url, 'PTTL', "own:$key");
var_dump($pttl > 1500 && $pttl <= 2000);
var_dump($lock->release());
// An empty prefix option overrides a non-empty ini prefix.
$lock = new RedisLock($key, null, null, ['prefix' => '']);
var_dump($lock->__debugInfo()['redisKey'] === $key);

// A later ini_set() applies to locks built afterwards, not to existing ones.
$before = new RedisLock($key);
ini_set('redislock.default_ttl', '0.5');
ini_set('redislock.prefix', '');
$after = new RedisLock($key);
var_dump($before->__debugInfo()['ttl'], $after->__debugInfo()['ttl']);
var_dump($after->__debugInfo()['redisKey'] === $key);
var_dump($after->acquire());
$pttl = redis_cmd($url, 'PTTL', $key);
var_dump($pttl > 0 && $pttl <= 500);
var_dump($after->release());
?>
--EXPECT--
string(22) "redis://127.0.0.1:6379"
string(0) ""
string(2) "30"
bool(true)
bool(true)
bool(true)
int(0)
bool(true)
bool(true)
float(7)
bool(true)
float(7)
bool(true)
int(1)
bool(true)
bool(true)
bool(true)
float(7)
float(0.5)
bool(true)
bool(true)
bool(true)
bool(true)

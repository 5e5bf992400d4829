--TEST--
ini_restore() brings a redislock.* setting changed with ini_set() back to its default
--EXTENSIONS--
redislock
--FILE--
<?php
ini_set('redislock.default_ttl', '0.5');
ini_set('redislock.prefix', 'tmp:');
ini_set('redislock.servers', 'redis://127.0.0.1:1');
ini_restore('redislock.default_ttl');
ini_restore('redislock.prefix');
ini_restore('redislock.servers');
var_dump(ini_get('redislock.default_ttl'), ini_get('redislock.prefix'), ini_get('redislock.servers'));
$info = (new RedisLock('k'))->__debugInfo();
var_dump($info['ttl'], $info['redisKey'], $info['servers'][0]);
?>
--EXPECT--
string(2) "30"
string(0) ""
string(22) "redis://127.0.0.1:6379"
float(30)
string(1) "k"
string(24) "redis://127.0.0.1:6379/0"

--TEST--
ini_get() returns the documented defaults when nothing is set, and new locks use them; every entry is PHP_INI_ALL but redislock.stats (PHP_INI_SYSTEM: read at startup)
--EXTENSIONS--
redislock
--INI--
--FILE--
<?php
foreach (['redislock.servers', 'redislock.default_ttl', 'redislock.prefix', 'redislock.connect_timeout', 'redislock.read_timeout', 'redislock.stats', 'redislock.unsafe_server', 'redislock.starve_after'] as $name) {
    echo $name, ' = ', var_export(ini_get($name), true), "\n";
}
$all = ini_get_all('redislock');
echo implode(',', array_keys($all)), "\n";
foreach ($all as $name => $entry) {
    if ($entry['access'] !== INI_ALL) {
        echo "$name is ", $entry['access'] === INI_SYSTEM ? 'PHP_INI_SYSTEM' : 'not PHP_INI_ALL', "\n";
    }
}
$info = (new RedisLock('k'))->__debugInfo();
var_dump($info['ttl'], $info['redisKey'], $info['servers']);
?>
--EXPECT--
redislock.servers = 'redis://127.0.0.1:6379'
redislock.default_ttl = '30'
redislock.prefix = ''
redislock.connect_timeout = '2'
redislock.read_timeout = '2'
redislock.stats = 'pool'
redislock.unsafe_server = 'warn'
redislock.starve_after = '0'
redislock.connect_timeout,redislock.default_ttl,redislock.prefix,redislock.read_timeout,redislock.servers,redislock.starve_after,redislock.stats,redislock.unsafe_server
redislock.stats is PHP_INI_SYSTEM
float(30)
string(1) "k"
array(1) {
  [0]=>
  string(24) "redis://127.0.0.1:6379/0"
}

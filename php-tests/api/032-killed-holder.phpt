--TEST--
A SIGKILLed holder's lock stays until its ttl ends; a waiter then gets it within about the ttl
--EXTENSIONS--
redislock
--SKIPIF--
<?php require __DIR__ . '/../skipif.inc'; ?>
--FILE--
<?php
require __DIR__ . '/../config.inc';
$url = redislock_test_url();
$key = redislock_test_key('killed-holder');

$code = sprintf(
    '$l = new RedisLock(%s, 1.0, %s, %s);
     if (!$l->acquire()) { echo "acquire failed\n"; exit(1); }
     echo $l->token(), "\n";
     sleep(30);',
    var_export($key, true), var_export(redislock_test_servers(), true),
    var_export(redislock_test_options(), true));
$file = tempnam(sys_get_temp_dir(), 'redislock-child-');
file_put_contents($file, "<?php\n" . $code);
$proc = proc_open([PHP_BINARY, '-n', '-d', 'extension=' . redislock_extension_path(), $file],
    [0 => ['file', '/dev/null', 'r'], 1 => ['pipe', 'w'], 2 => ['file', '/dev/null', 'w']], $pipes);
stream_set_timeout($pipes[1], 5);
$token = trim((string) fgets($pipes[1]));
var_dump((bool) preg_match('/^[0-9a-f]{32}$/', $token));

proc_terminate($proc, 9);                        // SIGKILL: no chance to release
fclose($pipes[1]);
proc_close($proc);
unlink($file);
var_dump(redis_cmd($url, 'GET', redislock_test_stored_key($key)) === $token);   // the lease outlives its holder
$left = redis_cmd($url, 'PTTL', redislock_test_stored_key($key)) / 1000;
var_dump($left > 0.3 && $left <= 1.0);

$lock = redislock_test_lock($key, 10);
var_dump($lock->acquire());                      // not before the lease ends
$t0 = microtime(true);
var_dump($lock->acquire(3.0));
$elapsed = microtime(true) - $t0;
var_dump($elapsed > $left - 0.15);
var_dump($elapsed < $left + 0.6);
var_dump(redis_cmd($url, 'GET', redislock_test_stored_key($key)) === $lock->token());
var_dump($lock->release());
var_dump(redis_cmd($url, 'EXISTS', redislock_test_stored_key($key)));
?>
--EXPECT--
bool(true)
bool(true)
bool(true)
bool(false)
bool(true)
bool(true)
bool(true)
bool(true)
bool(true)
int(0)

--TEST--
auto_renew: a holder killed with SIGKILL stops renewing; its lease ends within its ttl and others can take the lock
--EXTENSIONS--
redislock
--SKIPIF--
<?php require __DIR__ . '/../skipif.inc'; ?>
--FILE--
<?php
require __DIR__ . '/../config.inc';
require __DIR__ . '/../children.inc';
$url = redislock_test_url();
$key = redislock_test_key('renew-killed');

$holder = spawn_php(sprintf('
    $l = new RedisLock(%s, 0.6, %s, ["auto_renew" => true]);
    if (!$l->acquire()) { echo "acquire failed\n"; exit(1); }
    echo $l->token(), "\n";
    sleep(30);',
    var_export($key, true), var_export($url, true)));
$token = read_line($holder);
$t0 = hrtime(true);
check('child holds the lock', strlen($token) === 32 && redis_cmd($url, 'GET', $key) === $token, $token);
usleep(900000);                                  // more than the 0.6 s ttl: only renewal keeps it
check('renewed while the child lives', redis_cmd($url, 'GET', $key) === $token);

proc_terminate($holder[0], 9);
$t_kill = hrtime(true);
[$code, $out] = finish_php($holder);
check('child killed', $code === 'signal 9', (string) $code);
check('the lease outlives its holder a little', redis_cmd($url, 'GET', $key) === $token);
check('the key vanishes within the ttl', wait_until(fn () => redis_cmd($url, 'EXISTS', $key) === 0, 2.0));
$gone = since($t_kill);
check('0.6 s plus margin', $gone < 0.85, sprintf('%.3f s', $gone));
$lock = new RedisLock($key, 5, $url);
var_dump($lock->acquire());
var_dump($lock->release());
?>
--EXPECT--
child holds the lock: ok
renewed while the child lives: ok
child killed: ok
the lease outlives its holder a little: ok
the key vanishes within the ttl: ok
0.6 s plus margin: ok
bool(true)
bool(true)

--TEST--
auto_renew after restore(): a hold handed over by an exited process is renewed at once and kept alive, then released
--EXTENSIONS--
redislock
--SKIPIF--
<?php require __DIR__ . '/../skipif.inc'; ?>
--FILE--
<?php
require __DIR__ . '/../config.inc';
require __DIR__ . '/../children.inc';
$url = redislock_test_url();
$key = redislock_test_key('renew-restore');

$a = spawn_php(sprintf('
    $l = new RedisLock(%s, 0.5, %s, ["auto_release" => false]);
    if (!$l->acquire()) { echo "acquire failed\n"; exit(1); }
    echo $l->token(), "\n";',
    var_export($key, true), var_export($url, true)));
$token = read_line($a);
$lock = RedisLock::restore($key, $token, 0.5, $url, ['auto_renew' => true]);
$t0 = hrtime(true);
[$code, $out] = finish_php($a);
check('A handed over and exited', strlen($token) === 32 && $code === 0 && $out === '', "$code: $token $out");
check('the key is A\'s lock', redis_cmd($url, 'GET', $key) === $token);

$min = PHP_INT_MAX;
$max = 0;
$owner_ok = true;
while (since($t0) < 1.5) {                       // three times the 0.5 s lease
    $owner_ok = $owner_ok && redis_cmd($url, 'GET', $key) === $token;
    $pttl = redis_cmd($url, 'PTTL', $key);
    $min = min($min, $pttl);
    $max = max($max, $pttl);
    usleep(20000);
}
check('kept alive for 1.5 s', $owner_ok && $min > 0, "min pttl $min");
check('renewed to the restored ttl', $max <= 500 && $max > 300, "max pttl $max");
var_dump($lock->isAcquired());
var_dump($lock->token() === $token);
var_dump($lock->release());
var_dump(redis_cmd($url, 'EXISTS', $key));
usleep(300000);                                  // no renewal after the release
var_dump(redis_cmd($url, 'EXISTS', $key));
?>
--EXPECT--
A handed over and exited: ok
the key is A's lock: ok
kept alive for 1.5 s: ok
renewed to the restored ttl: ok
bool(true)
bool(true)
bool(true)
int(0)
int(0)

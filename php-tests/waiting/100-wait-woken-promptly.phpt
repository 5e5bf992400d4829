--TEST--
A blocked acquire($wait) is woken by another process's release() at once, not at its retry_delay fallback
--EXTENSIONS--
redislock
--SKIPIF--
<?php require __DIR__ . '/../skipif.inc'; ?>
--FILE--
<?php
require __DIR__ . '/../config.inc';
require __DIR__ . '/../children.inc';
$url = redislock_test_url();
$key = redislock_test_key('woken-promptly');

// The holder: takes the lock, waits until we are queued and blocked, then
// releases 150 ms after we joined the queue. A waiter that relied on its
// 0.5 s fallback check would return about 350 ms after the release.
$holder = spawn_php(sprintf('
    $url = %s; $key = %s;
    $l = new RedisLock($key, 10, $url);
    if (!$l->acquire()) { echo "acquire failed\n"; exit(1); }
    echo $l->token(), "\n";
    $queued = wait_until(fn () => redis_cmd($url, "ZCARD", $key . "~~q") === 1);
    usleep(150000);
    $t = hrtime(true);
    $ok = $l->release();
    echo $queued ? "queued" : "never queued", " ", $ok ? "released" : "release failed", " ", $t, "\n";',
    var_export($url, true), var_export($key, true)));
$holder_token = read_line($holder);
check('holder took the lock', strlen($holder_token) === 32, $holder_token);

$lock = new RedisLock($key, 10, $url);
$t0 = hrtime(true);
$got = $lock->acquire(3.0);
$t_got = hrtime(true);
[$code, $out] = finish_php($holder);
$parts = explode(' ', trim($out));
check('acquire returned true', $got === true);
check('holder saw us queued and released', $code === 0 && count($parts) === 3
    && $parts[0] === 'queued' && $parts[1] === 'released', "exit $code: $out");
$handoff_ms = ($t_got - (int) ($parts[2] ?? 0)) / 1e6;
check('it really waited', since($t0) > 0.1, sprintf('%.3f s', since($t0)));
check('handed over within 150 ms of the release', $handoff_ms >= 0 && $handoff_ms < 150,
    sprintf('%.1f ms', $handoff_ms));
check('the lock holds our token', redis_cmd($url, 'GET', $key) === $lock->token()
    && $lock->token() !== $holder_token);
// Out of the queue; the hand-over's mark ("h") stays until the release.
check('queue is empty', redis_cmd($url, 'EXISTS', $key . '~~q', $key . '~~w~' . $lock->token()) === 0
    && in_array(redis_cmd($url, 'GET', $key . '~~a~' . $lock->token()), [null, false, 'h'], true));
var_dump($lock->release());
var_dump(redis_cmd($url, 'EXISTS', $key) + count(redis_cmd($url, 'KEYS', $key . '~~*')));
?>
--EXPECT--
holder took the lock: ok
acquire returned true: ok
holder saw us queued and released: ok
it really waited: ok
handed over within 150 ms of the release: ok
the lock holds our token: ok
queue is empty: ok
bool(true)
int(0)

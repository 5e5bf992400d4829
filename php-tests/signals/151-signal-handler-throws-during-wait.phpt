--TEST--
signals: a handler that throws ends a blocked acquire with its own exception; the waiter leaves the queue and the release does not hand the lock to it
--EXTENSIONS--
redislock
pcntl
--SKIPIF--
<?php require __DIR__ . '/../skipif.inc'; ?>
--FILE--
<?php
require __DIR__ . '/../config.inc';
require __DIR__ . '/../children.inc';
$url = redislock_test_url();
$key = redislock_test_key('alarm-throws');

$holder = spawn_php(sprintf('
    $l = new RedisLock(%s, 60, %s);
    echo $l->acquire() ? "held\n" : "not held\n";
    usleep(3000000);
    echo $l->release() ? "released\n" : "not released\n";',
    var_export($key, true), var_export($url, true)));
check('holder has the lock', read_line($holder) === 'held');

final class JobTimedOut extends RuntimeException {}
pcntl_async_signals(true);
pcntl_signal(SIGALRM, function () { throw new JobTimedOut('job timed out'); });

$t0 = hrtime(true);
pcntl_alarm(1);
$lock = new RedisLock($key, 60, $url);
try {
    $lock->acquire(15.0);
    echo "acquire returned\n";
} catch (JobTimedOut $e) {
    check('the handler\'s exception, after about 1 s', $e->getMessage() === 'job timed out' && since($t0) < 1.2, sprintf('%.3f s', since($t0)));
}
check('not held', $lock->token() === null && $lock->isAcquired() === false);
check('the waiter left the queue at once', redis_cmd($url, 'EXISTS', $key . '~~q') + count(redis_cmd($url, 'KEYS', $key . '~~a~*')) === 0);

// The same through withLock(): the callback never runs.
pcntl_alarm(1);
try {
    $lock->withLock(function () { echo "callback ran\n"; }, 15.0);
} catch (JobTimedOut $e) {
    echo "withLock: ", $e->getMessage(), "\n";
}
[$code, $out] = finish_php($holder);
check('holder released it', $code === 0 && trim($out) === 'released', "$code: $out");
// Nobody got it: the release found no live waiter and deleted the lock.
var_dump(redis_cmd($url, 'EXISTS', $key, $key . '~~q') + count(redis_keys_left($url, $key . '~~*')));
?>
--EXPECT--
holder has the lock: ok
the handler's exception, after about 1 s: ok
not held: ok
the waiter left the queue at once: ok
withLock: job timed out
holder released it: ok
int(0)

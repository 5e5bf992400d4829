--TEST--
Semaphore: a signal handler that throws ends a blocked acquire with its own exception; the waiter leaves the queue and gets no permit; a plain signal does not end the wait
--EXTENSIONS--
redislock
pcntl
--SKIPIF--
<?php require __DIR__ . '/../skipif.inc'; if (getenv('REDISLOCK_TEST_TOPOLOGY') === 'redlock') die('skip semaphores refuse Redlock'); ?>
--FILE--
<?php
require __DIR__ . '/../config.inc';
require __DIR__ . '/../children.inc';
use RedisLock\Semaphore;
$url = redislock_test_url();
$name = redislock_test_key('sem-alarm');
$base = redislock_test_stored_key($name) . '~~s';
$sem = fn() => new Semaphore($name, 1, 60, redislock_test_servers(), redislock_test_options());

final class JobTimedOut extends RuntimeException {}
pcntl_async_signals(true);
$holder = $sem();
check('holder has the permit', $holder->acquire());

pcntl_signal(SIGALRM, function () { throw new JobTimedOut('job timed out'); });
$t0 = hrtime(true);
pcntl_alarm(1);
$waiter = $sem();
try {
    $waiter->acquire(15.0);
    echo "acquire returned\n";
} catch (JobTimedOut $e) {
    check('the handler\'s exception, after about 1 s', since($t0) < 1.5, sprintf('%.3f s', since($t0)));
}
check('not held', $waiter->isAcquired() === false);
// Queue, marks and wake-up lists gone.
$left = redis_keys_left($url, "$base~~*");
check('the waiter left the queue at once', $left === [], implode(' ', $left));

// withPermit(): the callback never runs.
pcntl_alarm(1);
try {
    $waiter->withPermit(function () { echo "callback ran\n"; }, 15.0);
} catch (JobTimedOut $e) {
    echo "withPermit: ", $e->getMessage(), "\n";
}

check('holder releases', $holder->release());

// A handler that returns: the wait goes on until a release frees a permit.
$child = spawn_php(sprintf('
    $s = new RedisLock\Semaphore(%s, 1, 60, %s, %s);
    echo $s->acquire() ? "held\n" : "not held\n";
    usleep(1500000);
    echo $s->release() ? "released\n" : "not released\n";',
    var_export($name, true), var_export(redislock_test_servers(), true), var_export(redislock_test_options(), true)));
check('a child holds the permit', read_line($child) === 'held');
$ticks = 0;
pcntl_signal(SIGALRM, function () use (&$ticks) { $ticks++; });
pcntl_alarm(1);
$t0 = hrtime(true);
$w = $sem();
$got = $w->acquire(10.0);
check('the wait went on past the signal and got the permit', $got && $ticks === 1 && since($t0) > 1.0, sprintf('%s %d %.3f s', var_export($got, true), $ticks, since($t0)));
[$code, $out] = finish_php($child);
check('the child released it', $code === 0 && trim($out) === 'released', "$code: $out");
check('released', $w->release());
var_dump(redis_keys_left($url, "$base*"));
?>
--EXPECT--
holder has the permit: ok
the handler's exception, after about 1 s: ok
not held: ok
the waiter left the queue at once: ok
withPermit: job timed out
holder releases: ok
a child holds the permit: ok
the wait went on past the signal and got the permit: ok
the child released it: ok
released: ok
array(0) {
}

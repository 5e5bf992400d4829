--TEST--
starve_after for a Semaphore's permits and acquireRead(): a waiter that barges is not queued (a free permit goes to whoever asks first), gets its hold in a Fiber in both modes, and a signal handler that throws ends its sleep leaving nothing in Redis
--EXTENSIONS--
redislock
pcntl
--SKIPIF--
<?php require __DIR__ . '/../skipif.inc'; if (getenv('REDISLOCK_TEST_TOPOLOGY')) die('skip on ' . getenv('REDISLOCK_TEST_TOPOLOGY') . ': one plain server'); ?>
--FILE--
<?php
require __DIR__ . '/../config.inc';
require __DIR__ . '/../children.inc';
use RedisLock\Semaphore;
$url = redislock_test_url();

echo "-- a barging permit waiter is not queued\n";
$name = redislock_test_key('sem-barging');
$base = $name . '~~s';
$holder = spawn_php(sprintf('
    $s = new RedisLock\Semaphore(%s, 1, 60, %s);
    echo $s->acquire() ? "held\n" : "not held\n";
    usleep(600000);
    echo $s->release() ? "released\n" : "not released\n";',
    var_export($name, true), var_export($url, true)));
check('holder has the permit', read_line($holder) === 'held');
$sem = new Semaphore($name, 1, 10, $url, ['starve_after' => 30, 'retry_delay' => 0.2]);
$fiber = new Fiber(function () use ($sem) {
    $t0 = hrtime(true);
    $got = $sem->acquire(5.0);
    Fiber::suspend([$got, since($t0)]);
    return $sem->release();
});
// The Fiber runs the whole wait: check the queue from a child meanwhile.
$looker = spawn_php(sprintf('
    usleep(300000);
    echo redis_cmd(%s, "EXISTS", %s), "\n";',
    var_export($url, true), var_export("$base~~q", true)));
[$got, $took] = $fiber->start();
check('the Fiber got the permit after the release', $got && $took > 0.4 && $took < 1.5, sprintf('%.3f s', $took));
[$code, $out] = finish_php($looker);
check('nobody was queued while it barged', $code === 0 && trim($out) === '0', "$code: $out");
[$code, $out] = finish_php($holder);
check('holder released it', $code === 0 && trim($out) === 'released', "$code: $out");
$fiber->resume();
check('the Fiber released it', $fiber->getReturn() === true);

echo "-- read holds in a Fiber, both modes\n";
foreach ([0, 0.001, 0.05] as $starve) {
    $key = redislock_test_key('read-barging');
    $writer = spawn_php(sprintf('
        $l = new RedisLock(%s, 60, %s);
        echo $l->acquire() ? "held\n" : "not held\n";
        usleep(300000);
        echo $l->release() ? "released\n" : "not released\n";',
        var_export($key, true), var_export($url, true)));
    check("starve_after $starve: the writer has the lock", read_line($writer) === 'held');
    $lock = new RedisLock($key, 10, $url, ['starve_after' => $starve, 'retry_delay' => 0.2]);
    $fiber = new Fiber(function () use ($lock) {
        $t0 = hrtime(true);
        $got = $lock->acquireRead(5.0);
        Fiber::suspend([$got, since($t0)]);
        return $lock->release();
    });
    [$got, $took] = $fiber->start();
    check("starve_after $starve: the Fiber waited and read", $got && $took > 0.1 && $took < 1.5, sprintf('%.3f s', $took));
    check("starve_after $starve: the main flow cannot release the Fiber's hold", !$lock->release());
    $fiber->resume();
    check("starve_after $starve: the Fiber released it", $fiber->getReturn() === true);
    [$code, $out] = finish_php($writer);
    check("starve_after $starve: the writer released it", $code === 0 && trim($out) === 'released', "$code: $out");
    var_dump(count(redis_keys_left($url, $key . '*')));
}

echo "-- a handler that throws\n";
$name = redislock_test_key('sem-barging-throws');
$holder = new Semaphore($name, 1, 60, $url);
check('holder has the permit', $holder->acquire());
final class JobTimedOut extends RuntimeException {}
pcntl_async_signals(true);
pcntl_signal(SIGALRM, function () { throw new JobTimedOut('job timed out'); });
$t0 = hrtime(true);
pcntl_alarm(1);
$waiter = new Semaphore($name, 1, 60, $url, ['starve_after' => 30]);
try {
    $waiter->acquire(15.0);
    echo "acquire returned\n";
} catch (JobTimedOut $e) {
    check('the handler\'s exception, after about 1 s', since($t0) < 1.5, sprintf('%.3f s', since($t0)));
}
check('not held', $waiter->isAcquired() === false);
check('released', $holder->release());
var_dump(redis_keys_left($url, $name . '*'));
?>
--EXPECT--
-- a barging permit waiter is not queued
holder has the permit: ok
the Fiber got the permit after the release: ok
nobody was queued while it barged: ok
holder released it: ok
the Fiber released it: ok
-- read holds in a Fiber, both modes
starve_after 0: the writer has the lock: ok
starve_after 0: the Fiber waited and read: ok
starve_after 0: the main flow cannot release the Fiber's hold: ok
starve_after 0: the Fiber released it: ok
starve_after 0: the writer released it: ok
int(0)
starve_after 0.001: the writer has the lock: ok
starve_after 0.001: the Fiber waited and read: ok
starve_after 0.001: the main flow cannot release the Fiber's hold: ok
starve_after 0.001: the Fiber released it: ok
starve_after 0.001: the writer released it: ok
int(0)
starve_after 0.05: the writer has the lock: ok
starve_after 0.05: the Fiber waited and read: ok
starve_after 0.05: the main flow cannot release the Fiber's hold: ok
starve_after 0.05: the Fiber released it: ok
starve_after 0.05: the writer released it: ok
int(0)
-- a handler that throws
holder has the permit: ok
the handler's exception, after about 1 s: ok
not held: ok
released: ok
array(0) {
}

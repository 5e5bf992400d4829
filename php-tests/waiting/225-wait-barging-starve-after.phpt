--TEST--
starve_after: a barging waiter is not woken by the release (the lock is left free for whoever asks first): it steps by itself within retry_delay and takes the lock; a signal handler that throws ends its sleep and it leaves the queue; a wait in a Fiber gets a hold of that Fiber in both modes; the option and its ini entry are validated
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

echo "-- not woken: it steps by itself\n";
$key = redislock_test_key('barging-steps');
$holder = spawn_php(sprintf('
    $l = new RedisLock(%s, 60, %s);
    echo $l->acquire() ? "held\n" : "not held\n";
    usleep(500000);
    echo $l->release() ? "released\n" : "not released\n";',
    var_export($key, true), var_export($url, true)));
check('holder has the lock', read_line($holder) === 'held');
$t0 = hrtime(true);
$lock = new RedisLock($key, 10, $url, ['starve_after' => 30, 'retry_delay' => 0.2]);
check('acquired within retry_delay of the release', $lock->acquire(5.0) && since($t0) < 1.2, sprintf('%.3f s', since($t0)));
check('its token is in Redis', redis_cmd($url, 'GET', $key) === $lock->token());
[$code, $out] = finish_php($holder);
check('holder released it', $code === 0 && trim($out) === 'released', "$code: $out");
$lock->release();

echo "-- in a Fiber, both modes\n";
foreach ([0, 0.001, 0.05] as $starve) {
    $key = redislock_test_key('barging-fiber');
    $holder = spawn_php(sprintf('
        $l = new RedisLock(%s, 60, %s);
        echo $l->acquire() ? "held\n" : "not held\n";
        usleep(300000);
        echo $l->release() ? "released\n" : "not released\n";',
        var_export($key, true), var_export($url, true)));
    check("starve_after $starve: holder has the lock", read_line($holder) === 'held');
    $lock = new RedisLock($key, 10, $url, ['starve_after' => $starve, 'retry_delay' => 0.2]);
    $fiber = new Fiber(function () use ($lock) {
        $t0 = hrtime(true);
        $got = $lock->acquire(5.0);
        Fiber::suspend([$got, since($t0)]);
        return $lock->release();
    });
    [$got, $took] = $fiber->start();
    check("starve_after $starve: the Fiber waited and got it", $got && $took > 0.1 && $took < 1.5, sprintf('%.3f s', $took));
    check("starve_after $starve: the main flow cannot release the Fiber's hold", !$lock->release() && $lock->isAcquired() === false);
    $fiber->resume();
    check("starve_after $starve: the Fiber released it", $fiber->getReturn() === true && redis_cmd($url, 'EXISTS', $key) === 0);
    [$code, $out] = finish_php($holder);
    check("starve_after $starve: holder released it", $code === 0 && trim($out) === 'released', "$code: $out");
}

echo "-- a handler that throws\n";
$key = redislock_test_key('barging-throws');
$holder = spawn_php(sprintf('
    $l = new RedisLock(%s, 60, %s);
    echo $l->acquire() ? "held\n" : "not held\n";
    usleep(2500000);
    echo $l->release() ? "released\n" : "not released\n";',
    var_export($key, true), var_export($url, true)));
check('holder has the lock', read_line($holder) === 'held');
final class JobTimedOut extends RuntimeException {}
pcntl_async_signals(true);
pcntl_signal(SIGALRM, function () { throw new JobTimedOut('job timed out'); });
$t0 = hrtime(true);
pcntl_alarm(1);
$lock = new RedisLock($key, 60, $url, ['starve_after' => 30]);
try {
    $lock->acquire(15.0);
    echo "acquire returned\n";
} catch (JobTimedOut $e) {
    check('the handler\'s exception, after about 1 s', since($t0) < 1.3, sprintf('%.3f s', since($t0)));
}
check('not held', $lock->token() === null && $lock->isAcquired() === false);
check('the waiter left the queue', redis_cmd($url, 'EXISTS', $key . '~~q') + count(redis_cmd($url, 'KEYS', $key . '~~a~*')) === 0);
[$code, $out] = finish_php($holder);
check('holder released it', $code === 0 && trim($out) === 'released', "$code: $out");
var_dump(redis_cmd($url, 'EXISTS', $key) + count(redis_keys_left($url, $key . '~~*')));

echo "-- validation\n";
foreach ([-1, INF, 'soon'] as $bad) {
    try {
        new RedisLock('k', 1, $url, ['starve_after' => $bad]);
        echo "accepted\n";
    } catch (ValueError | TypeError $e) {
        echo get_class($e), ': ', $e->getMessage(), "\n";
    }
}
var_dump(ini_get('redislock.starve_after'));
ini_set('redislock.starve_after', '-1');
try {
    new RedisLock('k', 1, $url);
} catch (ValueError $e) {
    echo $e->getMessage(), "\n";
}
?>
--EXPECTF--
-- not woken: it steps by itself
holder has the lock: ok
acquired within retry_delay of the release: ok
its token is in Redis: ok
holder released it: ok
-- in a Fiber, both modes
starve_after 0: holder has the lock: ok
starve_after 0: the Fiber waited and got it: ok
starve_after 0: the main flow cannot release the Fiber's hold: ok
starve_after 0: the Fiber released it: ok
starve_after 0: holder released it: ok
starve_after 0.001: holder has the lock: ok
starve_after 0.001: the Fiber waited and got it: ok
starve_after 0.001: the main flow cannot release the Fiber's hold: ok
starve_after 0.001: the Fiber released it: ok
starve_after 0.001: holder released it: ok
starve_after 0.05: holder has the lock: ok
starve_after 0.05: the Fiber waited and got it: ok
starve_after 0.05: the main flow cannot release the Fiber's hold: ok
starve_after 0.05: the Fiber released it: ok
starve_after 0.05: holder released it: ok
-- a handler that throws
holder has the lock: ok
the handler's exception, after about 1 s: ok
not held: ok
the waiter left the queue: ok
holder released it: ok
int(0)
-- validation
ValueError: RedisLock::__construct(): Argument #4 ($options) option "starve_after" must be greater than or equal to 0
ValueError: RedisLock::__construct(): Argument #4 ($options) option "starve_after" must be finite
TypeError: %s
string(1) "0"
%sredislock.starve_after%s

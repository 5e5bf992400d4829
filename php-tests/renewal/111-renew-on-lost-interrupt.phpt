--TEST--
on_lost => 'interrupt': a busy withLock() callback is interrupted with LockLostException soon after its lease is lost; option validation
--EXTENSIONS--
redislock
--SKIPIF--
<?php require __DIR__ . '/../skipif.inc'; ?>
--FILE--
<?php
require __DIR__ . '/../config.inc';
require __DIR__ . '/../children.inc';
$url = redislock_test_url();
$key = redislock_test_key('on-lost-interrupt');

foreach ([['on_lost' => 'interrupt'], ['on_lost' => 'interrupt', 'auto_renew' => false],
          ['on_lost' => 'bogus', 'auto_renew' => true], ['on_lost' => 'ignore', 'auto_renew' => true]] as $options) {
    try {
        new RedisLock($key, 1, $url, $options);
        echo "accepted\n";
    } catch (Throwable $e) {
        echo get_class($e), ': ', $e->getMessage(), "\n";
    }
}

$lock = new RedisLock($key, 0.6, $url, ['auto_renew' => true, 'on_lost' => 'interrupt']);
$t0 = hrtime(true);
$deleter = null;
$iterations = 0;
try {
    $lock->withLock(function (RedisLock $l) use ($url, $key, &$deleter, &$iterations, &$first) {
        $deleter = spawn_php(sprintf('
            usleep(300000);
            $t = hrtime(true);
            echo redis_cmd(%s, "DEL", %s), " ", $t, "\n";',
            var_export($url, true), var_export($key, true)));
        $end = hrtime(true) + 3_000_000_000;
        $first = __LINE__ + 1;                   // the loop, lines $first .. $first + 2
        while (hrtime(true) < $end) {
            $iterations++;
        }
        echo "callback ran to its end\n";
    });
    echo "no exception\n";
} catch (RedisLock\LockLostException $e) {
    $t_caught = hrtime(true);
    echo get_class($e), ': ', $e->getMessage(), "\n";
    check('thrown inside the callback', $e->getFile() === __FILE__ && $e->getLine() >= $first && $e->getLine() <= $first + 2,
        "line {$e->getLine()}, callback loop on lines $first.." . ($first + 2));
}
[$code, $out] = finish_php($deleter);
[$deleted, $t_del] = explode(' ', trim($out)) + [null, 0];
check('the other process deleted the key', $code === 0 && $deleted === '1', "$code: $out");
$latency = (($t_caught ?? PHP_INT_MAX) - (int) $t_del) / 1e9;
check('interrupted within 0.5 s of the deletion', $latency > 0 && $latency < 0.5, sprintf('%.3f s', $latency));
check('total under 1.5 s', since($t0) < 1.5, sprintf('%.3f s', since($t0)));
check('the callback was running', $iterations > 1000, "$iterations");
var_dump($lock->token(), $lock->isAcquired());
var_dump(redis_cmd($url, 'EXISTS', $key));
// The lock is usable again, and an uneventful withLock() is not interrupted.
var_dump($lock->withLock(fn () => array_sum(range(1, 100000))));
var_dump(redis_cmd($url, 'EXISTS', $key));
?>
--EXPECT--
ValueError: RedisLock::__construct(): Argument #4 ($options) on_lost => "interrupt" needs auto_renew => true
ValueError: RedisLock::__construct(): Argument #4 ($options) on_lost => "interrupt" needs auto_renew => true
ValueError: RedisLock::__construct(): Argument #4 ($options) option "on_lost" must be "ignore" or "interrupt"
accepted
RedisLock\LockLostException: the lock's lease was lost while withLock() ran (on_lost: interrupt)
thrown inside the callback: ok
the other process deleted the key: ok
interrupted within 0.5 s of the deletion: ok
total under 1.5 s: ok
the callback was running: ok
NULL
bool(false)
int(0)
int(5000050000)
int(0)

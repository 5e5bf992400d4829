--TEST--
on_lost => 'interrupt' interrupts only a running withLock() callback of the lost hold (not plain code, not another lock's callback); nested withLock unwinds
--EXTENSIONS--
redislock
--SKIPIF--
<?php require __DIR__ . '/../skipif.inc'; ?>
--FILE--
<?php
require __DIR__ . '/../config.inc';
require __DIR__ . '/../children.inc';
$url = redislock_test_url();
$kx = redislock_test_key('interrupt-x');
$ky = redislock_test_key('interrupt-y');
$options = ['auto_renew' => true, 'on_lost' => 'interrupt'];
$x = new RedisLock($kx, 0.6, $url, $options);
$y = new RedisLock($ky, 0.6, $url, $options);

function busy(float $seconds): int
{
    $n = 0;
    $end = hrtime(true) + (int) ($seconds * 1e9);
    while (hrtime(true) < $end) {
        $n++;
    }
    return $n;
}

echo "-- lost outside withLock()\n";
var_dump($x->acquire());
redis_cmd($url, 'DEL', $kx);
try {
    busy(0.6);
    echo "not interrupted\n";
} catch (Throwable $e) {
    echo get_class($e), "\n";
}
var_dump($x->isAcquired(), $x->release());

echo "-- lost while another lock's callback runs\n";
var_dump($x->acquire());
try {
    var_dump($y->withLock(function () use ($url, $kx) {
        redis_cmd($url, 'DEL', $kx);
        busy(0.6);
        return 'y done';
    }));
} catch (Throwable $e) {
    echo get_class($e), "\n";
}
var_dump($x->isAcquired(), $x->release());
var_dump(redis_cmd($url, 'EXISTS', $kx, $ky));

echo "-- outer lock lost while an inner callback runs\n";
$t0 = hrtime(true);
try {
    $x->withLock(function () use ($y, $url, $kx) {
        return $y->withLock(function () use ($url, $kx) {
            redis_cmd($url, 'DEL', $kx);
            busy(3.0);
            return 'inner done';
        });
    });
    echo "not interrupted\n";
} catch (Throwable $e) {
    echo get_class($e), "\n";
}
check('soon', since($t0) < 1.0, sprintf('%.3f s', since($t0)));
var_dump($x->token(), $y->token());
var_dump(redis_cmd($url, 'EXISTS', $kx, $ky));  // the inner lock was released on the way out
echo "-- no interrupt pending afterwards\n";
busy(0.3);
var_dump($y->withLock(fn () => busy(0.4) > 0));
?>
--EXPECT--
-- lost outside withLock()
bool(true)
not interrupted
bool(false)
bool(false)
-- lost while another lock's callback runs
bool(true)
string(6) "y done"
bool(false)
bool(false)
int(0)
-- outer lock lost while an inner callback runs
RedisLock\LockLostException
soon: ok
NULL
NULL
int(0)
-- no interrupt pending afterwards
bool(true)

--TEST--
on_lost => "interrupt" is thrown only inside the code that holds the lock: a withLock() callback suspended in a Fiber whose lease is lost gets LockLostException when the Fiber runs again, never the main flow or another Fiber
--EXTENSIONS--
redislock
--SKIPIF--
<?php require __DIR__ . '/../skipif.inc'; ?>
--FILE--
<?php
require __DIR__ . '/../config.inc';
$url = redislock_test_url();
$key = redislock_test_key('interrupt-fiber');

/** Runs PHP opcodes for $seconds (an interrupt is delivered between two). */
function busy(float $seconds): int
{
    $n = 0;
    $end = hrtime(true) + (int) ($seconds * 1e9);
    while (hrtime(true) < $end) {
        $n++;
    }
    return $n;
}

$holder = new Fiber(function () use ($url, $key) {
    $lock = new RedisLock($key, 0.6, $url, ['auto_renew' => true, 'on_lost' => 'interrupt']);
    try {
        $lock->withLock(function () {
            Fiber::suspend('suspended in the callback');
            busy(1.0);                       // the interrupt lands here
            return 'not interrupted';
        });
        return 'withLock returned';
    } catch (RedisLock\LockLostException $e) {
        return 'LockLostException inside the holding Fiber';
    }
});
echo $holder->start(), "\n";
redis_cmd($url, 'DEL', $key);                // the lease is lost while it is suspended

$other = new Fiber(function () {
    busy(1.0);
    Fiber::suspend('other fiber ran untouched');
    return 'other done';
});
try {
    echo $other->start(), "\n";
    busy(1.0);                               // the renewal thread finds the loss meanwhile
    echo "main flow ran untouched\n";
    echo $other->resume() ?? '', $other->getReturn(), "\n";
} catch (Throwable $e) {
    echo 'WRONG: ', get_class($e), " outside the holding Fiber\n";
}
$holder->resume();
echo $holder->getReturn(), "\n";
var_dump(redis_cmd($url, 'EXISTS', $key));
?>
--EXPECT--
suspended in the callback
other fiber ran untouched
main flow ran untouched
other done
LockLostException inside the holding Fiber
int(0)

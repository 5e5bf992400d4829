--TEST--
A wait inside a Swoole coroutine is refused with a LockException that says what to do (it would stall every coroutine of the worker); tries without a wait, and waits outside coroutines, work; nothing is autoloaded to find out
--EXTENSIONS--
redislock
--SKIPIF--
<?php require __DIR__ . '/../skipif.inc'; if (extension_loaded('swoole') || extension_loaded('openswoole')) die('skip the stand-in needs a PHP without Swoole'); ?>
--FILE--
<?php
namespace Swoole {
    /*
     * A stand-in with Swoole's API names (Swoole cannot be installed here):
     * getCid() is -1 outside a coroutine and the coroutine's id inside one.
     */
    class Coroutine
    {
        public static int $cid = -1;
        public static function getCid(): int
        {
            return self::$cid;
        }
    }
}

namespace {
require __DIR__ . '/../config.inc';
require __DIR__ . '/../children.inc';

$autoloaded = [];
spl_autoload_register(function (string $class) use (&$autoloaded) {
    $autoloaded[] = $class;
});

$url = redislock_test_url();
$key = redislock_test_key('swoole');
$exists = fn () => redis_cmd($url, 'EXISTS', redislock_test_stored_key($key));
$lock = redislock_test_lock($key, 5);

echo "-- outside a coroutine\n";
check('acquire(0.2) waits as usual', $lock->acquire(0.2) && $lock->release());

echo "-- inside one\n";
Swoole\Coroutine::$cid = 7;
check('acquire() without a wait works', $lock->acquire() && $lock->release());
check('withLock() without a wait works', $lock->withLock(fn () => 'ran') === 'ran');
$refused = function (string $what, callable $call) use ($exists) {
    try {
        $call();
        check($what, false, 'no exception');
    } catch (RedisLock\LockException $e) {
        check($what, str_contains($e->getMessage(), 'Swoole\Coroutine::getCid() > 0')
            && str_contains($e->getMessage(), 'Swoole\Coroutine::sleep()'), $e->getMessage());
    }
    check("$what: nothing written", $exists() === 0);
};
$refused('acquire(1)', fn () => $lock->acquire(1));
$refused('acquireRead(1)', fn () => $lock->acquireRead(1));
$refused('withLock(..., 1)', fn () => $lock->withLock(fn () => null, 1));
$sem = new RedisLock\Semaphore(redislock_test_key('swoole-sem'), 2, 5, redislock_test_servers(), redislock_test_options());
$refused('Semaphore::acquire(1)', fn () => $sem->acquire(1));
$refused('Semaphore::withPermit(..., 1)', fn () => $sem->withPermit(fn () => null, 1));

echo "-- a ValueError still comes first\n";
try {
    $lock->acquire(-1);
} catch (ValueError $e) {
    echo get_class($e), "\n";
}

echo "-- the coroutine ended\n";
Swoole\Coroutine::$cid = -1;
check('acquire(0.2) waits again', $lock->acquire(0.2) && $lock->release());
check('no autoloader was asked', $autoloaded === [], implode(', ', $autoloaded));
}
?>
--EXPECT--
-- outside a coroutine
acquire(0.2) waits as usual: ok
-- inside one
acquire() without a wait works: ok
withLock() without a wait works: ok
acquire(1): ok
acquire(1): nothing written: ok
acquireRead(1): ok
acquireRead(1): nothing written: ok
withLock(..., 1): ok
withLock(..., 1): nothing written: ok
Semaphore::acquire(1): ok
Semaphore::acquire(1): nothing written: ok
Semaphore::withPermit(..., 1): ok
Semaphore::withPermit(..., 1): nothing written: ok
-- a ValueError still comes first
ValueError
-- the coroutine ended
acquire(0.2) waits again: ok
no autoloader was asked: ok

--TEST--
signals: a handler that throws ends a wait that goes on through dropped connections (the server killed) at once, not at the wait's end
--EXTENSIONS--
redislock
pcntl
posix
--SKIPIF--
<?php require __DIR__ . '/../skipif.inc'; ?>
--FILE--
<?php
require __DIR__ . '/../config.inc';
require __DIR__ . '/../children.inc';
$srv = TestRedis::start();
$url = $srv->url();
$key = redislock_test_key('server-away');
// Held by someone else for a minute.
redis_cmd($url, 'SET', $key, 'holder', 'PX', '60000');

$lock = new RedisLock($key, 10, $url);
check('held elsewhere', $lock->acquire() === false);

final class JobTimedOut extends RuntimeException {}
pcntl_async_signals(true);
// At 1 s the server dies (the wait's connection drops, new ones are
// refused: the wait goes on, pausing between tries); at 2 s a handler
// throws.
pcntl_signal(SIGALRM, function () use ($srv) { posix_kill($srv->pid, SIGKILL); });
pcntl_signal(SIGUSR1, function () { throw new JobTimedOut('job timed out'); });
$child = spawn_php(sprintf('usleep(2000000); exec("kill -USR1 %d", $o, $rc); echo $rc === 0 ? "sent\n" : "not sent\n";', posix_getpid()));

$t0 = hrtime(true);
pcntl_alarm(1);
try {
    $lock->acquire(10.0);
    echo "acquire returned\n";
} catch (Throwable $e) {
    // The handler's exception, alone: the waiter's give-back got no answer
    // either (the server is gone), and is left to be sent again later.
    check('the handler\'s exception, at about 2 s', $e instanceof JobTimedOut && since($t0) < 3.0, sprintf('%s after %.3f s', get_class($e), since($t0)));
    echo get_class($e), $e->getPrevious() ? ' (previous: ' . get_class($e->getPrevious()) . ')' : '', "\n";
}
check('not held', $lock->token() === null);
[$code, $out] = finish_php($child);
check('the child signalled', $code === 0 && trim($out) === 'sent', "$code: $out");
?>
--EXPECT--
held elsewhere: ok
the handler's exception, at about 2 s: ok
JobTimedOut
not held: ok
the child signalled: ok

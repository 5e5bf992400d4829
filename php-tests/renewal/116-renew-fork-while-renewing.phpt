--TEST--
fork while the renewal thread is busy: every child exits (no lock inherited from the renewal thread blocks it)
--EXTENSIONS--
redislock
--SKIPIF--
<?php require __DIR__ . '/../skipif.inc'; ?>
--FILE--
<?php
require __DIR__ . '/../config.inc';
require __DIR__ . '/../children.inc';
// A private server: the renewal load below stays off the shared one.
$server = TestRedis::start();
$url = $server->url();

// Keeps the renewal thread busy: 200 holds renewed every millisecond.
$locks = [];
for ($i = 0; $i < 200; $i++) {
    $l = new RedisLock(redislock_test_key("busy$i"), 0.003, $url, ['auto_renew' => true]);
    $l->acquire();
    $locks[] = $l;
}
time_nanosleep(0, 50_000_000);

// Children that exit at once (the extension's request and module shutdown
// still run in them). A child forked while the renewal thread held one of
// the extension's internal locks must not wait for it forever. Any single
// child that never exits is a bug, so this test avoids the functions that
// make run-tests retry a failed test (each fork has a small chance to hit
// the window; a retry would halve the chance to see it).
$pids = [];
$now = fn () => (float) (new DateTimeImmutable())->format('U.u');
$stop_forking = $now() + 1.6;
// At least 300 forks however slow the machine is, then more for 1.6 s.
for ($i = 0; $i < 1500 && ($i < 300 || $now() < $stop_forking); $i++) {
    $pid = pcntl_fork();
    if ($pid === 0) {
        child_exit(0);
    }
    if ($pid < 0) {
        break;
    }
    $pids[$pid] = true;
}
$forked = count($pids);
$exited = 0;
wait_until(function () use (&$pids, &$exited) {
    foreach (array_keys($pids) as $pid) {
        if (pcntl_waitpid($pid, $status, WNOHANG) === $pid) {
            unset($pids[$pid]);
            $exited += pcntl_wifexited($status) && pcntl_wexitstatus($status) === 0 ? 1 : 0;
        }
    }
    return !$pids;
}, 5.0);
foreach (array_keys($pids) as $pid) {
    posix_kill_pid($pid, SIGKILL);
    pcntl_waitpid($pid, $status);
}
check('forked at least 300 children', $forked >= 300, "$forked");
check('every child exited within 5 s', count($pids) === 0, count($pids) . " of $forked never exited");
check('all of them normally', $exited === $forked - count($pids), "$exited exited normally");
foreach ($locks as $l) {
    $l->release();
}
?>
--EXPECT--
forked at least 300 children: ok
every child exited within 5 s: ok
all of them normally: ok

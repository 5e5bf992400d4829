<?php
/*
 * redislock demo: several PHP processes contend for one lock.
 *
 *   php -d extension=target/release/redislock.so examples/demo.php [redis://127.0.0.1:6379]
 *
 * 1. Without a lock, 4 processes increment a shared counter (read, think,
 *    write) and lose updates.
 * 2. With RedisLock::withLock() the same work loses nothing.
 * 3. A holder is killed with SIGKILL while it holds the lock: the others
 *    take over as soon as its lease (ttl) ends.
 * 4. acquire() with no wait returns false at once while someone holds it.
 */

if (!extension_loaded('redislock')) {
    fwrite(STDERR, "load the extension: php -d extension=/path/to/redislock.so examples/demo.php\n");
    exit(1);
}

$server = $argv[1] ?? (getenv('REDISLOCK_SERVER') ?: 'redis://127.0.0.1:6379');
$workers = 4;
$rounds = 5;
$start = microtime(true);

function say(string $line): void
{
    global $start;
    printf("[%7.1f ms] %s\n", (microtime(true) - $start) * 1000, $line);
}

/** Runs $work($id) in $n forked processes and waits for all of them. */
function run_workers(int $n, callable $work): void
{
    $pids = [];
    for ($id = 1; $id <= $n; $id++) {
        $pid = pcntl_fork();
        if ($pid === 0) {
            $work($id);
            exit(0);
        }
        $pids[] = $pid;
    }
    foreach ($pids as $pid) {
        pcntl_waitpid($pid, $status);
    }
}

/** The critical section: a read-modify-write that is only safe under a lock. */
function increment(string $file): array
{
    $before = (int) file_get_contents($file);
    usleep(3000); // "work" between the read and the write
    file_put_contents($file, (string) ($before + 1));
    return [$before, $before + 1];
}

$counter = tempnam(sys_get_temp_dir(), 'redislock-demo-');
$expected = $workers * $rounds;

echo "redislock ", phpversion('redislock'), " demo on $server: $workers processes x $rounds increments\n\n";

echo "1) no lock\n";
file_put_contents($counter, '0');
run_workers($workers, function (int $id) use ($counter, $rounds) {
    for ($i = 0; $i < $rounds; $i++) {
        increment($counter);
    }
});
$got = (int) file_get_contents($counter);
say("counter = $got, expected $expected: " . ($got === $expected ? 'no updates lost (lucky)' : ($expected - $got) . ' updates lost'));

echo "\n2) RedisLock::withLock()\n";
file_put_contents($counter, '0');
$key = 'demo:counter:' . getmypid();
run_workers($workers, function (int $id) use ($counter, $rounds, $server, $key) {
    $lock = new RedisLock($key, 5.0, $server);
    for ($i = 0; $i < $rounds; $i++) {
        $asked = microtime(true);
        [$from, $to] = $lock->withLock(function () use ($counter) {
            return increment($counter);
        }, 10.0);
        say(sprintf("worker %d: waited %5.1f ms, counter %2d -> %2d", $id, (microtime(true) - $asked) * 1000, $from, $to));
        usleep(5000); // work outside the lock
    }
});
$got = (int) file_get_contents($counter);
say("counter = $got, expected $expected: " . ($got === $expected ? 'no updates lost' : 'LOST UPDATES'));

echo "\n3) a holder is killed (SIGKILL) while holding a lock with a 1 s lease\n";
$crashKey = 'demo:crash:' . getmypid();
$pid = pcntl_fork();
if ($pid === 0) {
    $lock = new RedisLock($crashKey, 1.0, $server);
    $lock->acquire();
    say("worker 9: acquired, now hanging");
    sleep(30);
    exit(0);
}
usleep(200000);
posix_kill_compat($pid);
pcntl_waitpid($pid, $status);
say("worker 9: killed with SIGKILL, its lock is still in Redis");
$lock = new RedisLock($crashKey, 5.0, $server);
$asked = microtime(true);
$ok = $lock->acquire(5.0);
say(sprintf("main: acquire(5.0) %s after %.0f ms (the dead holder's lease ran out)", $ok ? 'succeeded' : 'FAILED', (microtime(true) - $asked) * 1000));

echo "\n4) try once while someone holds it\n";
$pid = pcntl_fork();
if ($pid === 0) {
    // A forked child never inherits its parent's holds: it is a stranger.
    $child = new RedisLock($crashKey, 5.0, $server);
    $t = microtime(true);
    $got = $child->acquire();
    say(sprintf("child: acquire() returned %s in %.2f ms: the parent holds it", var_export($got, true), (microtime(true) - $t) * 1000));
    exit(0);
}
pcntl_waitpid($pid, $status);
$lock->release();
say("main: released; token now " . var_export($lock->token(), true));

unlink($counter);

/** SIGKILL without the posix extension (not loaded under php -n). */
function posix_kill_compat(int $pid): void
{
    if (function_exists('posix_kill')) {
        posix_kill($pid, SIGKILL);
    } else {
        exec('kill -9 ' . $pid);
    }
}

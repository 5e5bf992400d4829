<?php
/*
 * One request of the threaded host (zts/host.c), in the role $argv[1]:
 *
 * - holder (thread 0, one long request): takes "zts:held" and a permit of
 *   semaphore "zts:sem" (1 permit), both renewed by the renewal thread,
 *   and keeps them while every worker thread runs all its requests (it
 *   contends for the shared key too); then checks that they are still its
 *   own (no other thread's request end, releaseAll() or acquire touched
 *   them), and leaves them behind on purpose (in a reference cycle, freed
 *   only after request end): its request end must release them (final.php
 *   checks).
 * - worker (threads 1.., REQUESTS each): ROUNDS critical sections on the
 *   shared key "zts:shared", checked with a Redis counter (INCR when in,
 *   DECR when out: never above 1); tries the holder's lock and permit (from
 *   its main flow and from a Fiber: it must not join them); ends its own
 *   request scope with releaseAll() (1 released: its own, not the
 *   holder's); runs a withLock() callback with on_lost => 'interrupt'
 *   whose lease it deletes in even requests (interrupted) and keeps in odd
 *   ones (never interrupted, while other threads' are); checks that the
 *   hold its previous request left behind is gone (released at that
 *   request's end); and leaves one behind itself, every third request
 *   ending in a fatal error instead (destructors skipped).
 * - setup (the main thread, before the others start): deletes the keys of
 *   an earlier run.
 * - tail (threads 1.., after their last worker request): counts the
 *   thread as done; all its earlier requests have ended by then.
 *
 * Failures go to the Redis list "zts:failures" (final.php reports them).
 */

require __DIR__ . '/../php-tests/config.inc';

[, $role, $thread, $request, $threads, $requests, $rounds] = $argv;
[$thread, $request, $threads, $requests, $rounds] = array_map('intval',
    [$thread, $request, $threads, $requests, $rounds]);
$url = getenv('REDISLOCK_TEST_URL');

function fail(string $what): void
{
    global $url, $role, $thread, $request;
    redis_cmd($url, 'RPUSH', 'zts:failures', "$role thread $thread request $request: $what");
}

function check(bool $ok, string $what): void
{
    if (!$ok) {
        fail($what);
    }
}

/** Waits (bounded) until $ready() is true; false on timeout. */
function wait_until(callable $ready, float $seconds): bool
{
    $end = microtime(true) + $seconds;
    while (!$ready()) {
        if (microtime(true) > $end) {
            return false;
        }
        usleep(2000);
    }
    return true;
}

/** One critical section on the shared key. */
function round_on_shared(string $url): void
{
    $lock = new RedisLock('zts:shared', 10.0, $url);
    if (!$lock->acquire(30.0)) {
        fail('no turn on zts:shared within 30 s');
        return;
    }
    $inside = redis_cmd($url, 'INCR', 'zts:inside');
    check($inside === 1, "$inside holders of zts:shared at once");
    usleep(random_int(100, 1000));
    redis_cmd($url, 'DECR', 'zts:inside');
    redis_cmd($url, 'INCR', 'zts:total');
    check($lock->release(), 'release of zts:shared returned false');
}

try {
    switch ($role) {
        case 'holder':
            // Short leases that the renewal thread keeps (a slow run under
            // valgrind outlasts them many times over).
            $held = new RedisLock('zts:held', 3.0, $url, ['auto_renew' => true]);
            check($held->acquire(0.0), 'could not take zts:held');
            $sem = new RedisLock\Semaphore('zts:sem', 1, 3.0, $url, ['auto_renew' => true]);
            check($sem->acquire(0.0), 'could not take the zts:sem permit');
            redis_cmd($url, 'SET', 'zts:held:token', (string) $held->token());
            redis_cmd($url, 'SET', 'zts:holder:ready', '1');
            // Contend too, until every worker thread has finished.
            $workers = $threads - 1;
            $done = fn () => (int) redis_cmd($url, 'GET', 'zts:workers:done') >= $workers;
            $end = microtime(true) + 120;
            while (!$done() && microtime(true) < $end) {
                round_on_shared($url);
                redis_cmd($url, 'INCR', 'zts:holder:rounds');
                usleep(1000);
            }
            check($done(), 'the workers did not finish within 120 s');
            check($held->isAcquired(), 'zts:held is no longer ours after the workers ran');
            check(redis_cmd($url, 'GET', 'zts:held') === $held->token(),
                'zts:held in Redis is not our token');
            check($sem->isAcquired(), 'the zts:sem permit is no longer ours after the workers ran');
            // Left behind on purpose: only a reference cycle keeps them
            // (freed after request end), so the request end releases them.
            $cycle = new stdClass();
            $cycle->self = $cycle;
            $cycle->held = $held;
            $cycle->sem = $sem;
            unset($cycle, $held, $sem);
            break;

        case 'worker':
            redis_cmd($url, 'INCR', 'zts:started');
            for ($i = 0; $i < $rounds; $i++) {
                round_on_shared($url);
            }
            check(wait_until(fn () => redis_cmd($url, 'GET', 'zts:holder:ready') === '1', 30),
                'the holder did not start within 30 s');
            // Another thread's hold is never joined (both run in their
            // main flow: Fiber 0 of two threads is not one Fiber).
            $other = new RedisLock('zts:held', 60.0, $url);
            check(!$other->acquire(0.0), "joined the holder thread's lock");
            // (ZTS_FIBERS=0: drd and ThreadSanitizer, which lose track of a
            // thread whose stack an uninstrumented PHP switches.)
            if (getenv('ZTS_FIBERS') !== '0') {
                $fiber = new Fiber(function () use ($url): bool {
                    return (new RedisLock('zts:held', 60.0, $url))->acquire(0.0);
                });
                $fiber->start();
                check(!$fiber->getReturn(), "a Fiber joined the holder thread's lock");
            }
            $permit = new RedisLock\Semaphore('zts:sem', 1, 60.0, $url);
            check(!$permit->acquire(0.0), "took a permit while the holder thread has the only one");
            // releaseAll() ends this request's scope only.
            $own = new RedisLock("zts:own:$thread", 60.0, $url);
            check($own->acquire(0.0), "could not take zts:own:$thread");
            $released = RedisLock::releaseAll();
            check($released === 1, "releaseAll() released $released holds, not 1");
            check(redis_cmd($url, 'GET', 'zts:held') === redis_cmd($url, 'GET', 'zts:held:token'),
                "releaseAll() touched the holder thread's lock");
            // on_lost => 'interrupt': the renewal thread (shared by all
            // threads) finds a lease lost and interrupts the callback of the
            // thread that holds it, and no other thread's (even requests
            // lose theirs, odd ones keep theirs while others lose).
            $lose = $request % 2 === 0;
            $name = "zts:lost:$thread:$request";
            $watched = new RedisLock($name, 0.6, $url, ['auto_renew' => true, 'on_lost' => 'interrupt']);
            try {
                $watched->withLock(function () use ($url, $name, $lose): void {
                    if ($lose) {
                        redis_cmd($url, 'DEL', $name);
                    }
                    $end = microtime(true) + ($lose ? 10.0 : 1.0);
                    while (microtime(true) < $end) {
                        usleep(5000);
                    }
                });
                check(!$lose, 'a lost lease did not interrupt its callback within 10 s');
            } catch (RedisLock\LockLostException $e) {
                check($lose, 'interrupted although its own lease was kept: ' . $e->getMessage());
            }
            // The previous request's forgotten hold ended with it.
            if ($request > 0) {
                $previous = 'zts:forgot:' . $thread . ':' . ($request - 1);
                check(redis_cmd($url, 'EXISTS', $previous) === 0,
                    "$previous is still held after its request ended");
            }
            // Forget one, in a cycle (freed only after request end) ...
            $cycle = new stdClass();
            $cycle->self = $cycle;
            // A lease longer than the run: only a release removes the key.
            $cycle->lock = new RedisLock("zts:forgot:$thread:$request", 600.0, $url);
            check($cycle->lock->acquire(0.0), "could not take zts:forgot:$thread:$request");
            unset($cycle);
            redis_cmd($url, 'INCR', 'zts:finished');
            // ... and every third request ends in a fatal error, which
            // skips destructors.
            if ($request % 3 === 2) {
                ini_set('display_errors', '0');
                trigger_error('a fatal error on purpose', E_USER_ERROR);
            }
            break;

        case 'setup':
            $old = redis_cmd($url, 'KEYS', 'zts:*');
            if ($old) {
                redis_cmd($url, 'DEL', ...$old);
            }
            break;

        case 'tail':
            // Every earlier request of this thread has ended.
            $last = "zts:forgot:$thread:" . ($requests - 1);
            check(redis_cmd($url, 'EXISTS', $last) === 0, "$last is still held after its request ended");
            redis_cmd($url, 'INCR', 'zts:workers:done');
            break;

        default:
            fail("unknown role $role");
    }
} catch (Throwable $e) {
    fail(get_class($e) . ': ' . $e->getMessage() . ' at ' . $e->getFile() . ':' . $e->getLine());
}

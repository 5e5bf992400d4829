--TEST--
RedisLock::stats($scope): a forked child counts into the pool, not into the parent's process figures; per primitive (lock, read, permit) with busy, timeouts and handovers; the hottest names; redislock.stats = process | off | a typo; bad scopes refused
--EXTENSIONS--
redislock
pcntl
--SKIPIF--
<?php require __DIR__ . '/../skipif.inc'; redislock_skip_unless_single('counts on one server of its own'); ?>
--FILE--
<?php
require __DIR__ . '/../config.inc';
require __DIR__ . '/../children.inc';
$server = TestRedis::start();
$url = $server->url();
$p0 = RedisLock::stats('process');
$pool0 = RedisLock::stats('pool');
check('the default scope is the pool', RedisLock::stats()['scope'] === 'pool' && $pool0['enabled'] && $p0['enabled']);
$prim = fn (array $s, string $p, string $k): int => $s['primitives'][$p][$k];
$delta = fn (string $scope, string $p, string $k, array $from): int => $prim(RedisLock::stats($scope), $p, $k) - $prim($from, $p, $k);

// One of each outcome per primitive.
$key = redislock_test_key('stats-prim');
$writer = new RedisLock($key, 10, $url);
$other = new RedisLock($key, 10, $url, ['reentrant' => false]);
$writer->acquire();
$other->acquire();                    // lock: busy
$other->acquireRead(0.05);            // read: timeout
$semName = redislock_test_key('stats-sem');
$sem = new RedisLock\Semaphore($semName, 1, 10, $url);
$sem2 = new RedisLock\Semaphore($semName, 1, 10, $url);
$sem->acquire();                      // permit: acquired
$sem2->acquire();                     // permit: busy
$sem2->acquire(0.05);                 // permit: timeout
$sem->release();                      // permit: released
$writer->release();
$reader = new RedisLock($key, 10, $url);
$reader->acquireRead();               // read: acquired
$reader->release();                   // read: released
$s = RedisLock::stats('process');
check('lock: acquired 1, busy 1, contended 1, released 1',
    [$delta('process', 'lock', 'acquired', $p0), $delta('process', 'lock', 'busy', $p0),
     $delta('process', 'lock', 'contended', $p0), $delta('process', 'lock', 'releases', $p0)] === [1, 1, 1, 1],
    json_encode($s['primitives']['lock']));
check('read: acquired 1, timeout 1, released 1',
    [$delta('process', 'read', 'acquired', $p0), $delta('process', 'read', 'timeouts', $p0),
     $delta('process', 'read', 'releases', $p0)] === [1, 1, 1], json_encode($s['primitives']['read']));
check('permit: acquired 1, busy 1, timeout 1, contended 2, released 1',
    [$delta('process', 'permit', 'acquired', $p0), $delta('process', 'permit', 'busy', $p0),
     $delta('process', 'permit', 'timeouts', $p0), $delta('process', 'permit', 'contended', $p0),
     $delta('process', 'permit', 'releases', $p0)] === [1, 1, 1, 2, 1], json_encode($s['primitives']['permit']));
check('totals add up the primitives', $s['acquires'] === array_sum(array_column($s['primitives'], 'acquires'))
    && $s['acquires'] === $s['acquired'] + $s['timeouts'] + $s['busy'] + $s['errors']);
$names = array_column(array_map(fn ($n) => $n + ['id' => "$n[primitive]:$n[name]"], $s['names']), null, 'id');
check('the contended names are in the table, per primitive',
    ($names["lock:$key"]['contended'] ?? 0) === 1 && ($names["read:$key"]['timeouts'] ?? 0) === 1
    && ($names["permit:$semName"]['contended'] ?? 0) === 2, json_encode($s['names']));

// A forked child: waits for the lock the parent holds, is handed it.
$pool1 = RedisLock::stats('pool');
$p1 = RedisLock::stats('process');
$held = new RedisLock($key, 10, $url);
$held->acquire();
$pid = pcntl_fork();
if ($pid === 0) {
    $waiter = new RedisLock($key, 10, $url);
    $ok = $waiter->acquire(5);
    $waiter->release();
    for ($i = 0; $i < 3; $i++) {
        $l = new RedisLock(redislock_test_key("stats-child-$i"), 10, $url);
        $l->acquire();
        $l->release();
    }
    child_exit($ok ? 0 : 1);
}
check('the child waits in the queue', wait_until(fn () => redis_cmd($url, 'EXISTS', $held->key() . '~~q') === 1, 3.0));
usleep(200000);
$held->release();
pcntl_waitpid($pid, $status);
check('the child was handed the lock', pcntl_wexitstatus($status) === 0);
check("the pool counts the child: 5 locks acquired (the parent's and the child's 4), 1 hand-over",
    $delta('pool', 'lock', 'acquired', $pool1) === 5 && $delta('pool', 'lock', 'handovers', $pool1) === 1,
    json_encode(RedisLock::stats('pool')['primitives']['lock']));
check("the parent's process figures do not",
    $delta('process', 'lock', 'acquired', $p1) === 1 && $delta('process', 'lock', 'handovers', $p1) === 0);

// Scopes refused.
try {
    RedisLock::stats('everything');
} catch (ValueError $e) {
    echo get_class($e), ': ', $e->getMessage(), "\n";
}
try {
    RedisLock::stats([]);
} catch (TypeError $e) {
    echo get_class($e), ': ', $e->getMessage(), "\n";
}

// php.ini's redislock.stats, read at startup.
$code = <<<'PHP'
$l = new RedisLock(redislock_test_key('stats-ini'), 5, $url);
$l->acquire(); $l->release();
$s = RedisLock::stats(); $pool = RedisLock::stats('pool'); $proc = RedisLock::stats('process');
echo json_encode([$s['scope'], $proc['enabled'], $proc['acquires'], $pool['enabled'], $pool['acquires'],
    ini_set('redislock.stats', 'pool'), preg_match('/scope="(\w+)"/', RedisLock::metrics(), $m) ? $m[1] : null]), "\n";
ob_start(); phpinfo(INFO_MODULES); $info = ob_get_clean();
preg_match('/Counted => (.*)/', $info, $m); echo $m[1], "\n";
PHP;
foreach (['process', 'off', 'Pool', 'everything'] as $setting) {
    $child = spawn_php("\$url = " . var_export($url, true) . ";\n$code", ['-d', "redislock.stats=$setting"]);
        echo "redislock.stats=$setting: ", implode(' | ', explode("\n", trim(finish_php($child)[1]))), "\n";
}
?>
--EXPECT--
the default scope is the pool: ok
lock: acquired 1, busy 1, contended 1, released 1: ok
read: acquired 1, timeout 1, released 1: ok
permit: acquired 1, busy 1, timeout 1, contended 2, released 1: ok
totals add up the primitives: ok
the contended names are in the table, per primitive: ok
the child waits in the queue: ok
the child was handed the lock: ok
the pool counts the child: 5 locks acquired (the parent's and the child's 4), 1 hand-over: ok
the parent's process figures do not: ok
ValueError: RedisLock::stats(): Argument #1 ($scope) must be "pool", "process" or null, "everything" given
TypeError: RedisLock::stats(): Argument #1 ($scope) must be of type ?string, array given
redislock.stats=process: ["process",true,1,false,0,false,"process"] | this process only
redislock.stats=off: ["process",false,0,false,0,false,"process"] | nothing
redislock.stats=Pool: ["pool",true,1,true,1,false,"pool"] | pool (every process of this pool) and this process
redislock.stats=everything: ["pool",true,1,true,1,false,"pool"] | pool (every process of this pool) and this process (redislock.stats = "everything" is not pool, process or off: pool used)

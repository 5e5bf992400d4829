--TEST--
RedisLock::inspect(): what Redis knows of a lock (held, mode, owners, readers, ttl, waiting, fence) and of the semaphore of that name; read-only, one round trip, validated like the constructor
--EXTENSIONS--
redislock
--SKIPIF--
<?php require __DIR__ . '/../skipif.inc'; ?>
--FILE--
<?php
require __DIR__ . '/../config.inc';
require __DIR__ . '/../children.inc';
$servers = redislock_test_servers();
$inspect = fn (string $key, array $options = []) => RedisLock::inspect($key, $servers, redislock_test_options($options));
$fields = fn (array $r) => json_encode(['held' => $r['held'], 'mode' => $r['mode'], 'owners' => count($r['owners']),
    'readers' => $r['readers'], 'ttl' => $r['ttl'] === null ? null : 'float', 'waiting' => $r['waiting'], 'fence' => $r['fence'],
    'semaphore' => $r['semaphore'] === null ? null : 'array']);
$semFields = fn (?array $s) => json_encode($s === null ? null : ['held' => $s['held'], 'permits' => $s['permits'],
    'holders' => $s['holders'], 'owners' => count($s['owners']), 'ttl' => $s['ttl'] === null ? null : 'float', 'waiting' => $s['waiting']]);
$redlock = redislock_test_topology() === 'redlock';

echo "-- free\n";
$key = redislock_test_key('inspect-free');
$r = $inspect($key);
echo $fields($r), "\n";
check('exactly these fields', array_keys($r) === ['held', 'mode', 'owners', 'readers', 'ttl', 'waiting', 'fence', 'semaphore', 'unsafe']);
check('unsafe is a list of server/reason/detail rows', array_is_list($r['unsafe'])
    && array_reduce($r['unsafe'], fn ($ok, $u) => $ok && array_keys($u) === ['server', 'reason', 'detail'], true));

echo "-- held\n";
$lock = redislock_test_lock($key, 10);
$lock->acquire();
$r = $inspect($key);
echo $fields($r), "\n";
check('owners = [token()]', $r['owners'] === [$lock->token()]);
check('ttl within the lease', is_float($r['ttl']) && $r['ttl'] > 9.0 && $r['ttl'] <= 10.0, var_export($r['ttl'], true));
check('nothing changed by looking', $lock->isAcquired() && $inspect($key)['owners'] === [$lock->token()]);
$lock->release();
echo $fields($inspect($key)), "\n";

echo "-- owner option\n";
$key = redislock_test_key('inspect-owner');
$owned = redislock_test_lock($key, 10, ['owner' => 'worker-7']);
$owned->acquire();
check('the owner string is the token', $inspect($key)['owners'] === ['worker-7']);
$owned->release();

echo "-- prefix\n";
$key = redislock_test_key('inspect-prefix');
$prefixed = redislock_test_lock($key, 10, ['prefix' => 'app:']);
$prefixed->acquire();
check('found under its prefix', $inspect($key, ['prefix' => 'app:'])['held'] && !$inspect($key)['held']);
$prefixed->release();

echo "-- a waiter in another process\n";
$key = redislock_test_key('inspect-wait');
$lock = redislock_test_lock($key, 10);
$lock->acquire();
$child = spawn_php(sprintf('
    $l = redislock_test_lock(%s, 10);
    echo "waiting\n";
    var_dump($l->acquire(5.0));
    $l->release();', var_export($key, true)));
echo read_line($child), "\n";
check('waiting = 1', wait_until(fn () => $inspect($key)['waiting'] === 1));
$r = $inspect($key);
echo $fields($r), "\n";
$lock->release();
echo read_line($child), "\n";
[$code, $rest] = finish_php($child);
echo "child exit $code", trim($rest) === '' ? '' : ": $rest", "\n";
check('the waiter left the queue', wait_until(fn () => $inspect($key)['waiting'] === 0));

echo "-- read holds (not over Redlock)\n";
if ($redlock) {
    echo <<<'TXT'
{"held":true,"mode":"read","owners":2,"readers":2,"ttl":"float","waiting":0,"fence":null,"semaphore":null}
owners are the readers' tokens, not the read mark: ok
ttl within the readers' leases: ok
waiting
a writer waits behind the readers: ok
{"held":true,"mode":"read","owners":2,"readers":2,"ttl":"float","waiting":1,"fence":null,"semaphore":null}
bool(true)
child exit 0
{"held":false,"mode":null,"owners":0,"readers":0,"ttl":null,"waiting":0,"fence":null,"semaphore":null}

TXT;
} else {
    $key = redislock_test_key('inspect-read');
    $readers = [redislock_test_lock($key, 10), redislock_test_lock($key, 20)];
    foreach ($readers as $reader) {
        $reader->acquireRead();
    }
    $r = $inspect($key);
    echo $fields($r), "\n";
    check("owners are the readers' tokens, not the read mark", count(array_unique($r['owners'])) === 2
        && count(preg_grep('/^[0-9a-f]{32}$/', $r['owners'])) === 2, json_encode($r['owners']));
    check("ttl within the readers' leases", $r['ttl'] > 19.0 && $r['ttl'] <= 20.0, var_export($r['ttl'], true));
    $child = spawn_php(sprintf('
        $l = redislock_test_lock(%s, 10);
        echo "waiting\n";
        var_dump($l->acquire(5.0));
        $l->release();', var_export($key, true)));
    echo read_line($child), "\n";
    check('a writer waits behind the readers', wait_until(fn () => $inspect($key)['waiting'] === 1));
    echo $fields($inspect($key)), "\n";
    foreach ($readers as $reader) {
        $reader->release();
    }
    echo read_line($child), "\n";
    [$code, $rest] = finish_php($child);
    echo "child exit $code", trim($rest) === '' ? '' : ": $rest", "\n";
    echo $fields($inspect($key)), "\n";
}

echo "-- a semaphore of the same name (not over Redlock)\n";
if ($redlock) {
    echo <<<'TXT'
{"held":true,"permits":3,"holders":2,"owners":2,"ttl":"float","waiting":0}
the lock of that name is free: ok
{"held":true,"mode":"write","owners":1,"readers":0,"ttl":"float","waiting":0,"fence":null,"semaphore":"array"}
the lock and the semaphore side by side: ok
{"held":false,"permits":3,"holders":0,"owners":0,"ttl":null,"waiting":0}

TXT;
} else {
    $key = redislock_test_key('inspect-sem');
    $permits = [];
    foreach ([10, 20] as $ttl) {
        $permit = new RedisLock\Semaphore($key, 3, $ttl, $servers, redislock_test_options());
        $permit->acquire();
        $permits[] = $permit;
    }
    $r = $inspect($key);
    echo $semFields($r['semaphore']), "\n";
    check('the lock of that name is free', !$r['held'] && $r['mode'] === null
        && $r['semaphore']['ttl'] > 19.0 && $r['semaphore']['ttl'] <= 20.0);
    $lock = redislock_test_lock($key, 10);
    $lock->acquire();
    $r = $inspect($key);
    echo $fields($r), "\n";
    check('the lock and the semaphore side by side', $r['owners'] === [$lock->token()]
        && $r['semaphore']['holders'] === 2 && !in_array($lock->token(), $r['semaphore']['owners'], true));
    $lock->release();
    $permits[0]->release();
    $permits[1]->release();
    // No holder is left; its number of permits stays until a second past
    // the last lease set.
    echo $semFields($inspect($key)['semaphore']), "\n";
}

echo "-- fencing\n";
if (redislock_test_topology() === 'redlock') {
    echo "fence = fencingToken(): ok\n";   // refused over Redlock
} else {
    $key = redislock_test_key('inspect-fence');
    $fenced = redislock_test_lock($key, 10, ['fencing' => true]);
    $fenced->acquire();
    $r = $inspect($key);
    check('fence = fencingToken()', is_int($r['fence']) && $r['fence'] === $fenced->fencingToken());
    $fenced->release();
}

echo "-- Redlock: a majority holding one token decides\n";
if (redislock_test_topology() !== 'redlock') {
    echo "one master alone: not held: ok\nthe majority's token and least ttl: ok\n";
} else {
    $key = redislock_test_key('inspect-quorum');
    $nodes = redislock_test_nodes();
    redis_cmd($nodes[0], 'SET', $key, 'stray', 'PX', '9000');
    check('one master alone: not held', $inspect($key)['held'] === false);
    redis_cmd($nodes[1], 'SET', $key, 'stray', 'PX', '5000');
    $r = $inspect($key);
    check("the majority's token and least ttl", $r['held'] && $r['owners'] === ['stray'] && $r['ttl'] <= 5.0 && $r['ttl'] > 4.0);
    foreach ($nodes as $node) {
        redis_cmd($node, 'DEL', $key);
    }
}

echo "-- validated like the constructor, before anything is sent\n";
$nobody = 'redis://127.0.0.1:1';
show_outcome(fn () => RedisLock::inspect('', $nobody));
show_outcome(fn () => RedisLock::inspect("a~~b", $nobody));
show_outcome(fn () => RedisLock::inspect('k', []));
show_outcome(fn () => RedisLock::inspect('k', 'redis://:secret@127.0.0.1:1?x'));
show_outcome(fn () => RedisLock::inspect('k', $nobody, ['bogus' => 1]));
show_outcome(fn () => RedisLock::inspect('k', $nobody, ['auto_release' => 'maybe']));
show_outcome(fn () => RedisLock::inspect('k', 42));
show_outcome(fn () => RedisLock::inspect('k', $nobody), fn ($r) => 'returned');

echo "-- read-only, one round trip (a private server)\n";
$redis = TestRedis::start();
$url = $redis->url();
$info = function (string $section, string $field) use ($url): int {
    preg_match('/^' . $field . ':(\d+)/m', redis_cmd($url, 'INFO', $section), $m);
    return (int) $m[1];
};
$stats = function () use ($url): array {
    preg_match_all('/^cmdstat_(\w+):calls=(\d+)/m', redis_cmd($url, 'INFO', 'commandstats'), $m);
    return array_combine($m[1], array_map('intval', $m[2]));
};
$key = redislock_test_key('inspect-private');
$held = new RedisLock($key, 10, $url, ['fencing' => true]);
$held->acquire();
RedisLock::inspect($key, $url);   // loads the scripts after NOSCRIPT
// The commands one look runs, and whether it wrote.
$look = function (string $key) use ($url, $info, $stats): array {
    $dirty = $info('persistence', 'rdb_changes_since_last_save');
    $before = $stats();
    $r = RedisLock::inspect($key, $url);
    $sent = [];
    foreach ($stats() as $command => $calls) {
        if ($command !== 'info' && $calls !== ($before[$command] ?? 0)) {
            $sent[] = "$command x" . ($calls - ($before[$command] ?? 0));
        }
    }
    sort($sent);
    echo 'commands run (reads only): ', implode(', ', $sent), "\n";
    check('no write', $info('persistence', 'rdb_changes_since_last_save') === $dirty);
    return $r;
};
$r = $look($key);
check('and it saw the hold', $r['held'] && $r['owners'] === [$held->token()] && $r['fence'] === $held->fencingToken());
$key = redislock_test_key('inspect-private-all');
$reader = new RedisLock($key, 10, $url);
$reader->acquireRead();
$permit = new RedisLock\Semaphore($key, 2, 10, $url);
$permit->acquire();
$r = $look($key);
check('and it saw the reader and the permit', $r['mode'] === 'read' && $r['readers'] === 1
    && $r['semaphore']['holders'] === 1 && $r['semaphore']['permits'] === 2);
$reader->release();
$permit->release();
$commands = $info('stats', 'total_commands_processed');
show_outcome(fn () => RedisLock::inspect('', $url));
show_outcome(fn () => RedisLock::inspect('k', $url, ['prefix' => [], 'nope' => true]));
check('nothing sent for a call that failed validation', $info('stats', 'total_commands_processed') - $commands === 1);
$held->release();
?>
--EXPECTF--
-- free
{"held":false,"mode":null,"owners":0,"readers":0,"ttl":null,"waiting":0,"fence":null,"semaphore":null}
exactly these fields: ok
unsafe is a list of server/reason/detail rows: ok
-- held
{"held":true,"mode":"write","owners":1,"readers":0,"ttl":"float","waiting":0,"fence":null,"semaphore":null}
owners = [token()]: ok
ttl within the lease: ok
nothing changed by looking: ok
{"held":false,"mode":null,"owners":0,"readers":0,"ttl":null,"waiting":0,"fence":null,"semaphore":null}
-- owner option
the owner string is the token: ok
-- prefix
found under its prefix: ok
-- a waiter in another process
waiting
waiting = 1: ok
{"held":true,"mode":"write","owners":1,"readers":0,"ttl":"float","waiting":1,"fence":null,"semaphore":null}
bool(true)
child exit 0
the waiter left the queue: ok
-- read holds (not over Redlock)
{"held":true,"mode":"read","owners":2,"readers":2,"ttl":"float","waiting":0,"fence":null,"semaphore":null}
owners are the readers' tokens, not the read mark: ok
ttl within the readers' leases: ok
waiting
a writer waits behind the readers: ok
{"held":true,"mode":"read","owners":2,"readers":2,"ttl":"float","waiting":1,"fence":null,"semaphore":null}
bool(true)
child exit 0
{"held":false,"mode":null,"owners":0,"readers":0,"ttl":null,"waiting":0,"fence":null,"semaphore":null}
-- a semaphore of the same name (not over Redlock)
{"held":true,"permits":3,"holders":2,"owners":2,"ttl":"float","waiting":0}
the lock of that name is free: ok
{"held":true,"mode":"write","owners":1,"readers":0,"ttl":"float","waiting":0,"fence":null,"semaphore":"array"}
the lock and the semaphore side by side: ok
{"held":false,"permits":3,"holders":0,"owners":0,"ttl":null,"waiting":0}
-- fencing
fence = fencingToken(): ok
-- Redlock: a majority holding one token decides
one master alone: not held: ok
the majority's token and least ttl: ok
-- validated like the constructor, before anything is sent
ValueError: RedisLock::inspect(): Argument #1 ($key) must not be empty
ValueError: RedisLock::inspect(): Argument #1 ($key) must not contain "~~": redislock's helper keys use it
ValueError: RedisLock::inspect(): Argument #2 ($servers) must not be empty
ValueError: RedisLock::inspect(): Argument #2 ($servers) has a malformed server URL "redis://:***@127.0.0.1:1?***": %s
ValueError: RedisLock::inspect(): Argument #3 ($options) contains unknown option "bogus" (known: %s)
ValueError: RedisLock::inspect(): Argument #3 ($options) %s
TypeError: RedisLock::inspect(): Argument #2 ($servers) must be of type array|string|null, int given
RedisLock\ConnectionException: %s
-- read-only, one round trip (a private server)
commands run (reads only): evalsha x1, exists x1, get x2, pttl x1, zcard x1, zrange x1
no write: ok
and it saw the hold: ok
commands run (reads only): evalsha x1, exists x1, get x2, pttl x2, zcard x2, zcount x1, zrange x3, zrangebyscore x1, zscore x1
no write: ok
and it saw the reader and the permit: ok
ValueError: RedisLock::inspect(): Argument #1 ($key) must not be empty
TypeError: RedisLock::inspect(): Argument #3 ($options) option "prefix" must be of type string, array given
nothing sent for a call that failed validation: ok

--TEST--
PHP-FPM: auto_renew + on_lost => 'interrupt': a key deleted behind the holder's back interrupts that request's withLock() callback with LockLostException (only that worker's), and the worker then serves requests normally
--EXTENSIONS--
redislock
--SKIPIF--
<?php require __DIR__ . '/../skipif.inc'; require __DIR__ . '/../fpm.inc'; fpm_skipif(); ?>
--FILE--
<?php
require __DIR__ . '/../config.inc';
require __DIR__ . '/../children.inc';
require __DIR__ . '/../fpm.inc';
$redis = TestRedis::start();
$url = $redis->url();
$pool = FpmPool::start();
$workers = $pool->workers();
$opts = json_encode(['auto_renew' => true, 'on_lost' => 'interrupt']);

// Three long callbacks at once, one per worker: the victim's computes for
// up to 4 s, the others' (1 s leases) for 1.5 s; only the victim's key is
// deleted.
$victim = $pool->send('busy.php', ['url' => $url, 'key' => 'victim', 'ttl' => 0.6, 'opts' => $opts, 'seconds' => 4]);
$others = [];
foreach (['other:1', 'other:2'] as $key) {
    $others[] = $pool->send('busy.php', ['url' => $url, 'key' => $key, 'ttl' => 1.0, 'opts' => $opts, 'seconds' => 1.5]);
}
$held = wait_until(fn () => redis_cmd($url, 'EXISTS', 'victim') + redis_cmd($url, 'EXISTS', 'other:1')
                            + redis_cmd($url, 'EXISTS', 'other:2') === 3, 3.0);
usleep(300000);
$t_del = hrtime(true);
$deleted = redis_cmd($url, 'DEL', 'victim');
check('all three held their locks; the victim\'s key deleted', $held && $deleted === 1);

$res = $pool->wait($victim, 5.0);
$latency = $res['seconds'] - ($t_del - $victim['t0']) / 1e9;
$j = $res['json'];
echo ($j['exception'] ?? 'no exception'), ': ', ($j['message'] ?? json_encode($res)), "\n";
check('thrown inside the callback (it printed "in callback" and did not finish)',
    str_starts_with($res['body'], "in callback\n") && !isset($j['result']), $res['body']);
check('the response came within 2.5 s of the deletion, well before the callback\'s 4 s (renewals every 0.2 s)', $latency > 0 && $latency < 2.5, sprintf('%.3f s', $latency));
check('one lost lease in that worker\'s stats', ($j['stats']['lost_leases'] ?? null) === 1, json_encode($j));
$victim_pid = $j['pid'] ?? null;
$other_pids = [];
foreach ($others as $h) {
    $r = $pool->wait($h, 5.0);
    check('another worker\'s callback was not interrupted', ($r['json']['result'] ?? '') === 'callback ran to its end',
        json_encode($r));
    $other_pids[] = $r['json']['pid'] ?? null;
}
$all = array_merge([$victim_pid], $other_pids);
sort($all);
check('the three ran on the three workers', $all === $workers, json_encode($all));

// Then every worker, the victim's included, runs a 1 s renewed
// withLock() with on_lost => interrupt to its end, and a plain lock.
$list = [];
for ($i = 0; $i < 3; $i++) {
    $list[] = ['busy.php', ['url' => $url, 'key' => "after:$i", 'ttl' => 0.6, 'opts' => $opts, 'seconds' => 1.0]];
}
$pids = [];
foreach ($pool->requests($list, 5.0) as $r) {
    if (($r['json']['result'] ?? '') === 'callback ran to its end' && !isset($r['json']['exception'])) {
        $pids[] = $r['json']['pid'];
    } else {
        echo 'after: ', json_encode($r), "\n";
    }
}
sort($pids);
check('then each worker (the victim\'s too) runs withLock() to its end, uninterrupted', $pids === $workers, json_encode($pids));
$ok = 0;
for ($i = 0; $i < 6; $i++) {
    $r = $pool->request('hold.php', ['url' => $url, 'key' => 'victim', 'ttl' => 5, 'end' => 'release']);
    $ok += (int) (($r['json']['acquired'] ?? false) && $r['json']['released']);
}
check('and plain acquire/release requests (6 of 6)', $ok === 6, "$ok");
check('nothing left in Redis', redis_keys_left($url) === [], json_encode(redis_keys_left($url)));
check('no worker crashed or was replaced', $pool->abnormalExits() === [] && $pool->workers() === $workers,
    implode("\n", $pool->abnormalExits()));
$pool->stop();
?>
--EXPECT--
all three held their locks; the victim's key deleted: ok
RedisLock\LockLostException: the lock's lease was lost while withLock() ran (on_lost: interrupt)
thrown inside the callback (it printed "in callback" and did not finish): ok
the response came within 2.5 s of the deletion, well before the callback's 4 s (renewals every 0.2 s): ok
one lost lease in that worker's stats: ok
another worker's callback was not interrupted: ok
another worker's callback was not interrupted: ok
the three ran on the three workers: ok
then each worker (the victim's too) runs withLock() to its end, uninterrupted: ok
and plain acquire/release requests (6 of 6): ok
nothing left in Redis: ok
no worker crashed or was replaced: ok

--TEST--
PHP-FPM: a graceful reload (SIGUSR2) while a request holds an auto-renewed lock lets that request finish holding it, releases it at its end, and the workers (renewal threads running) exit cleanly; the new workers lock and renew
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
// process_control_timeout: how long the workers get to finish on a reload
// (their exits are logged at debug level during a reload).
$pool = FpmPool::start([], [], ['process_control_timeout' => '5s', 'log_level' => 'debug']);
$old = $pool->workers();
$renew = fn (string $key, float $hold) => ['renew.php', ['url' => $url, 'key' => $key, 'ttl' => 0.6, 'hold' => $hold,
                                                          'opts' => '{"auto_renew":true}']];

// Every worker starts its renewal thread.
$ok = 0;
foreach ($pool->requests([$renew('warm:0', 0.4), $renew('warm:1', 0.4), $renew('warm:2', 0.4)], 5.0) as $r) {
    $ok += (int) ($r['json']['ours_throughout'] ?? false);
}
check('every worker held a renewed lock', $ok === 3, "$ok");

// A 1.5 s renewed hold in flight when the master is told to reload.
$h = $pool->send(...$renew('inflight', 1.5));
wait_until(fn () => redis_cmd($url, 'EXISTS', 'inflight') === 1, 3.0);
usleep(200000);
posix_kill_pid($pool->pid, SIGUSR2);
$res = $pool->wait($h, 6.0);
$exists = redis_cmd($url, 'EXISTS', 'inflight');
check('the request in flight finished, the lock ours and renewed throughout',
    ($res['json']['ours_throughout'] ?? false) && $res['json']['renewals'] >= 3 && $res['seconds'] >= 1.5,
    json_encode($res));
check('released at its end', $exists === 0, "EXISTS $exists");
$new = $pool->waitReplaced($old, 5.0);
check('the master reloaded: all workers new', count($new) === 3 && array_intersect($old, $new) === [],
    json_encode([$old, $new]) . "\n" . $pool->log());
$clean = array_filter($old, fn ($p) => preg_match("/child $p exited with code 0 /", $pool->log()) === 1);
check('the old workers exited with code 0', count($clean) === 3 && !str_contains($pool->log(), 'exited on signal')
    && !str_contains($pool->log(), 'WARNING'), $pool->log());

$ok = 0;
$pids = [];
foreach ($pool->requests([$renew('after:0', 0.8), $renew('after:1', 0.8), $renew('after:2', 0.8)], 5.0) as $r) {
    $ok += (int) (($r['json']['ours_throughout'] ?? false) && $r['json']['renewals'] >= 2);
    $pids[] = $r['json']['pid'] ?? null;
}
sort($pids);
check('each new worker holds a renewed lock', $ok === 3 && $pids === $new, json_encode($pids));
check('nothing left in Redis', redis_keys_left($url) === [], json_encode(redis_keys_left($url)));
$pool->stop();
?>
--EXPECT--
every worker held a renewed lock: ok
the request in flight finished, the lock ours and renewed throughout: ok
released at its end: ok
the master reloaded: all workers new: ok
the old workers exited with code 0: ok
each new worker holds a renewed lock: ok
nothing left in Redis: ok

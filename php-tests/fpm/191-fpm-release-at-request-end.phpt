--TEST--
PHP-FPM: a lock still held when the request ends is released before the response completes (return, fatal error, uncaught exception, exit()), and the worker serves the next request
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

// ttl 30 s: a key that is gone was released, not expired.
$list = [];
foreach (['return', 'return', 'return', 'fatal', 'throw', 'exit'] as $i => $end) {
    $list[] = ['hold.php', ['url' => $url, 'key' => "held:$i:$end", 'ttl' => 30, 'end' => $end, 'sleep_ms' => 150]];
}
// Three at a time, so every worker ends a request holding a lock.
foreach (array_chunk($list, 3) as $chunk) {
    foreach ($pool->requests($chunk, 5.0) as $k => $res) {
        $end = $chunk[$k][1]['end'];
        $key = $chunk[$k][1]['key'];
        $exists = redis_cmd($url, 'EXISTS', $key);     // right after the response
        $shown = match ($end) {
            'fatal' => str_contains($res['body'], 'Call to undefined function redislock_no_such_function()'),
            'throw' => str_contains($res['body'], 'Uncaught RuntimeException: uncaught while holding the lock'),
            default => true,
        };
        check(sprintf('%-6s: held, response complete, key gone', $end),
            ($res['json']['acquired'] ?? false) === true && $res['exit'] === 0 && $shown && $exists === 0,
            json_encode($res) . " EXISTS=$exists");
        $pids[$end][] = $res['json']['pid'] ?? null;
    }
}
sort($pids['return']);
check('the three plain returns ran on the three workers', $pids['return'] === $workers, json_encode($pids));

// Every worker serves the next requests normally (one per worker, at once).
$list = [];
for ($i = 0; $i < 3; $i++) {
    $list[] = ['hold.php', ['url' => $url, 'key' => "held:$i:return", 'ttl' => 30, 'end' => 'release', 'sleep_ms' => 150]];
}
$ok = 0;
$next = [];
foreach ($pool->requests($list, 5.0) as $res) {
    $ok += (int) (($res['json']['acquired'] ?? false) && $res['json']['released']);
    $next[] = $res['json']['pid'] ?? null;
}
sort($next);
check('then each of the same 3 workers acquires and releases again', $ok === 3 && $next === $workers, json_encode($next));
check('nothing left in Redis', redis_keys_left($url) === [], json_encode(redis_keys_left($url)));
check('no worker crashed or was replaced', $pool->abnormalExits() === [] && $pool->workers() === $workers,
    implode("\n", $pool->abnormalExits()));
$pool->stop();
?>
--EXPECT--
return: held, response complete, key gone: ok
return: held, response complete, key gone: ok
return: held, response complete, key gone: ok
fatal : held, response complete, key gone: ok
throw : held, response complete, key gone: ok
exit  : held, response complete, key gone: ok
the three plain returns ran on the three workers: ok
then each of the same 3 workers acquires and releases again: ok
nothing left in Redis: ok
no worker crashed or was replaced: ok

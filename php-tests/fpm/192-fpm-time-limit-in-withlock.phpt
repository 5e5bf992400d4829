--TEST--
PHP-FPM: max_execution_time (1 s) expiring inside a withLock() callback releases the lock at the end of that request, and the worker serves the next request
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
// request_terminate_timeout only as a safety net: the time limit must end it.
// (The limit counts CPU time: on a loaded machine 1 s of it takes longer.)
$pool = FpmPool::start(['max_execution_time' => '1'], ['request_terminate_timeout' => '8s']);
$workers = $pool->workers();

// On two workers at once a callback that never returns: one with a 30 s
// lease that would outlive the test if it were not released, one
// auto-renewed (ttl 1 s).
$cases = [
    'ttl 30'             => ['ttl' => 30, 'opts' => '{}', 'wait' => 1],
    'ttl 1, auto_renew'  => ['ttl' => 1, 'opts' => '{"auto_renew":true}'],
];
$list = [];
foreach ($cases as $name => $q) {
    $list[] = ['busy.php', $q + ['url' => $url, 'key' => "busy:$name"]];
}
$results = $pool->requests($list, 9.0);
foreach (array_keys($cases) as $i => $name) {
    $res = $results[$i];
    $exists = redis_cmd($url, 'EXISTS', "busy:$name");
    check("$name: stopped by the time limit inside the callback, key gone at once",
        str_starts_with($res['body'], "in callback\n") && $res['json'] === null
        && str_contains($res['body'], 'Maximum execution time of 1 second exceeded') && $exists === 0,
        json_encode($res) . " EXISTS=$exists");
}
check('both ended by the time limit, not request_terminate_timeout', $pool->abnormalExits() === [],
    implode("\n", $pool->abnormalExits()));
// The auto-renewed lease is not renewed after the request: nothing comes back.
usleep(400000);
check('the renewed key stays gone', redis_cmd($url, 'EXISTS', 'busy:ttl 1, auto_renew') === 0);

// Every worker then runs withLock() to its end, one request each.
$list = [];
foreach (['ttl 30', 'ttl 1, auto_renew', 'third'] as $name) {
    $list[] = ['busy.php', ['url' => $url, 'key' => "busy:$name", 'ttl' => 1, 'opts' => '{"auto_renew":true}',
                            'seconds' => 0.3]];
}
$next = [];
foreach ($pool->requests($list, 5.0) as $res) {
    if (($res['json']['result'] ?? '') === 'callback ran to its end') {
        $next[] = $res['json']['pid'];
    } else {
        echo 'next request: ', json_encode($res), "\n";
    }
}
sort($next);
check('each of the 3 workers then runs withLock() to its end', $next === $workers, json_encode($next));
check('nothing left in Redis', redis_keys_left($url) === [], json_encode(redis_keys_left($url)));
check('no worker crashed or was replaced', $pool->abnormalExits() === [] && $pool->workers() === $workers,
    implode("\n", $pool->abnormalExits()));
$pool->stop();
?>
--EXPECT--
ttl 30: stopped by the time limit inside the callback, key gone at once: ok
ttl 1, auto_renew: stopped by the time limit inside the callback, key gone at once: ok
both ended by the time limit, not request_terminate_timeout: ok
the renewed key stays gone: ok
each of the 3 workers then runs withLock() to its end: ok
nothing left in Redis: ok
no worker crashed or was replaced: ok

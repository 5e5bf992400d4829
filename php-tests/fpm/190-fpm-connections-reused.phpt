--TEST--
PHP-FPM (pm = static, 3 workers): each worker keeps one connection per role (lock, waiter, renewal) and reuses it across its requests
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
echo count($workers), " workers\n";

$served = [];    // pid => requests
$failures = [];
$n = 0;
// Three requests at once, each busy for a while: one per worker. Each uses
// a plain lock, a waited acquire (BLPOP connection) and an auto-renewed
// hold (the renewal thread's connection), and opens no connection itself.
$round = function () use ($pool, $url, &$served, &$failures, &$n): array {
    $list = [];
    for ($i = 0; $i < 3; $i++, $n++) {
        $list[] = ['roles.php', ['url' => $url, 'a' => "a:$n", 'w' => "w:$n", 'r' => "r:$n", 'sleep_ms' => 100]];
    }
    $pids = [];
    foreach ($pool->requests($list, 5.0) as $res) {
        $j = $res['json'];
        if (!$j || !$j['plain'] || !$j['waited'] || !$j['renewed'] || $j['stats']['reconnects'] !== 0) {
            $failures[] = json_encode($res);
            continue;
        }
        $pids[] = $j['pid'];
        $served[$j['pid']] = ($served[$j['pid']] ?? 0) + 1;
    }
    sort($pids);
    return $pids;
};

$first = $round();
check('the first 3 requests ran on the 3 workers', $first === $workers, implode(',', $first));
$before = fpm_redis_clients($url, $workers);
$received = redis_info_int($url, 'total_connections_received');
echo 'connections per worker: ', implode(' ', array_map(fn ($p) => count($before[$p]), $workers)), "\n";
check('no connection of anyone else', $before['other'] === [], json_encode($before));

$spread = true;
for ($r = 0; $r < 4; $r++) {
    $spread = $spread && $round() === $workers;
}
check('every round of 3 requests ran on all 3 workers', $spread);
// Quick requests one after another, whichever worker takes them.
for ($i = 0; $i < 9; $i++, $n++) {
    $res = $pool->request('hold.php', ['url' => $url, 'key' => "q:$n", 'ttl' => 10, 'end' => 'release']);
    if (($res['json']['acquired'] ?? false) && $res['json']['released']) {
        $served[$res['json']['pid']] = ($served[$res['json']['pid']] ?? 0) + 1;
    } else {
        $failures[] = json_encode($res);
    }
}
check('every request succeeded', $failures === [], implode("\n", $failures));
echo array_sum($served), " requests served\n";

$after = fpm_redis_clients($url, $pool->workers());
check('the same workers (none respawned)', $pool->workers() === $workers, implode(',', $pool->workers()));
check('the same connections (CLIENT ID) per worker as after its first request', $after === $before,
    json_encode($before) . ' -> ' . json_encode($after));
$new = redis_info_int($url, 'total_connections_received') - $received;
check('no new connection to Redis (total_connections_received)', $new === 0, "$new new");
check('no worker crashed', $pool->abnormalExits() === [], implode("\n", $pool->abnormalExits()));
$pool->stop();
?>
--EXPECT--
3 workers
the first 3 requests ran on the 3 workers: ok
connections per worker: 3 3 3
no connection of anyone else: ok
every round of 3 requests ran on all 3 workers: ok
every request succeeded: ok
24 requests served
the same workers (none respawned): ok
the same connections (CLIENT ID) per worker as after its first request: ok
no new connection to Redis (total_connections_received): ok
no worker crashed: ok

--TEST--
PHP-FPM: pool-wide statistics (4 static workers, pm.max_requests = 5): after 200 lock requests, some contended, served by 40 generations of recycled workers, any worker reports pool totals equal to the requests served, and its own process figures stay its own
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
$pool = FpmPool::start([], ['pm.max_children' => 4, 'pm.max_requests' => 5]);
$first = $pool->workers();

// 25 rounds of 8 requests at once over 3 names: several wait for the same
// lock each round, and are handed it.
$served = 0;
$failed = [];
$pids = [];
for ($round = 0; $round < 25; $round++) {
    $list = [];
    for ($i = 0; $i < 8; $i++) {
        $list[] = ['hold.php', ['key' => 'pool-stats:' . ($i % 3), 'ttl' => 10, 'url' => $url, 'wait' => 10,
                                'sleep_ms' => 5, 'end' => 'release']];
    }
    foreach ($pool->requests($list, 20.0) as $res) {
        $a = $res['json'];
        if (($a['acquired'] ?? false) && ($a['released'] ?? false)) {
            $served++;
            $pids[$a['pid']] = true;
        } else {
            $failed[] = $res;
        }
    }
}
check('200 requests took and released their lock', $served === 200, json_encode(array_slice($failed, 0, 3)));
check('served by recycled workers (at least 30 pids)', count($pids) >= 30 && array_intersect($first, $pool->workers()) === [],
    count($pids) . ' pids');

$answer = $pool->request('stats.php')['json'];
$stats = $answer['stats'] ?? [];
$lock = $stats['primitives']['lock'] ?? [];
check('the default scope in FPM is the pool', ($stats['scope'] ?? null) === 'pool' && ($stats['enabled'] ?? false) === true);
check('pool totals equal the requests served: 200 acquires, 200 acquired, 200 releases',
    [$lock['acquires'] ?? null, $lock['acquired'] ?? null, $lock['releases'] ?? null] === [200, 200, 200], json_encode($lock));
check('contended and handed over in the pool', ($lock['contended'] ?? 0) > 0 && ($lock['handovers'] ?? 0) > 0
    && $lock['handovers'] <= $lock['contended'], json_encode($lock));
check('wait percentiles ordered', $lock['wait_p50_us'] > 0 && $lock['wait_p50_us'] <= $lock['wait_p99_us']
    && $lock['wait_p99_us'] <= $lock['wait_max_us']);
$names = array_column($stats['names'] ?? [], 'contended', 'name');
check('the three names are the hottest', count(array_intersect_key($names, array_flip(['pool-stats:0', 'pool-stats:1', 'pool-stats:2']))) === 3
    && array_sum($names) === $lock['contended'], json_encode($stats['names'] ?? null));
check('no other primitive counted', ($stats['primitives']['read']['acquires'] ?? -1) === 0
    && ($stats['primitives']['permit']['acquires'] ?? -1) === 0);

// The answering worker's own figures: at most its 4 earlier requests.
$proc = $pool->request('process-stats.php')['json']['stats'] ?? [];
check("a worker's process figures are its own", ($proc['scope'] ?? null) === 'process'
    && ($proc['acquires'] ?? 99) <= 4, json_encode($proc['acquires'] ?? null));
check('no worker crashed', $pool->abnormalExits() === [], implode("\n", $pool->abnormalExits()));
$pool->stop();
?>
--EXPECT--
200 requests took and released their lock: ok
served by recycled workers (at least 30 pids): ok
the default scope in FPM is the pool: ok
pool totals equal the requests served: 200 acquires, 200 acquired, 200 releases: ok
contended and handed over in the pool: ok
wait percentiles ordered: ok
the three names are the hottest: ok
no other primitive counted: ok
a worker's process figures are its own: ok
no worker crashed: ok

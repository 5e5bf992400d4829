--TEST--
PHP-FPM: workers recycled by pm.max_requests right after a request that held a lock leave nothing behind beyond its lease (auto_release: gone at once; auto_release off: expires after its ttl, not renewed, then free)
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
$pool = FpmPool::start([], ['pm.max_requests' => 2]);

/** Three requests at once (one per worker); returns their answers, or prints what went wrong. */
function round_of_3(FpmPool $pool, string $script, array $queries): array
{
    $answers = [];
    foreach ($pool->requests(array_map(fn ($q) => [$script, $q + ['sleep_ms' => 150]], $queries), 6.0) as $res) {
        if ($res['json'] === null) {
            echo "request failed: ", json_encode($res), "\n";
        }
        $answers[] = $res['json'];
    }
    return $answers;
}
$keys = fn (string $p) => [['key' => "$p:0"], ['key' => "$p:1"], ['key' => "$p:2"]];
$q = fn (string $p, array $extra) => array_map(fn ($k) => $k + $extra + ['url' => $url], $keys($p));

// Generation 1: request 1 acquires and releases, request 2 returns holding
// a 30 s lease; then each worker exits (max_requests 2).
$gen1 = $pool->workers();
round_of_3($pool, 'hold.php', $q('warm', ['ttl' => 30, 'end' => 'release']));
$a = round_of_3($pool, 'hold.php', $q('kept', ['ttl' => 30]));
$exists = array_sum(array_map(fn ($k) => redis_cmd($url, 'EXISTS', $k['key']), $keys('kept')));
check('last request of each worker held a lock; gone at once after the response',
    count(array_filter($a, fn ($x) => $x['acquired'] ?? false)) === 3 && $exists === 0, "EXISTS $exists");
$gen2 = $pool->waitReplaced($gen1);
check('all 3 workers recycled', count($gen2) === 3 && array_intersect($gen1, $gen2) === [],
    json_encode([$gen1, $gen2]));

// Generation 2: request 1 uses auto_renew (the renewal thread starts),
// request 2 holds an auto-renewed 0.6 s lease for 1.3 s with
// auto_release off, then the worker exits.
round_of_3($pool, 'hold.php', $q('warm2', ['ttl' => 0.6, 'opts' => '{"auto_renew":true}', 'end' => 'release']));
$opts = json_encode(['auto_renew' => true, 'auto_release' => false]);
$b = round_of_3($pool, 'renew.php', $q('lease', ['ttl' => 0.6, 'opts' => $opts, 'hold' => 1.3]));
$t_response = hrtime(true);
$pttl = array_map(fn ($k) => redis_cmd($url, 'PTTL', $k['key']), $keys('lease'));
check('renewed while the request ran (ours for 1.3 s, > 2 renewals each)',
    count(array_filter($b, fn ($x) => ($x['ours_throughout'] ?? false) && $x['renewals'] > 2)) === 3, json_encode($b));
check('left in Redis after the response with what remains of its lease', min($pttl) > 0 && max($pttl) <= 600, json_encode($pttl));
// Not renewed any more: each key's PTTL only goes down until it is gone.
$max_seen = array_combine(array_column($keys('lease'), 'key'), $pttl);
$grew = false;
$gone = wait_until(function () use ($url, &$max_seen, &$grew) {
    $left = 0;
    foreach ($max_seen as $k => $last) {
        $p = redis_cmd($url, 'PTTL', $k);
        if ($p > 0) {
            $grew = $grew || $p > $last;
            $max_seen[$k] = $p;
            $left++;
        }
    }
    return $left === 0;
}, 2.0);
$took = since($t_response);
check('never renewed after the request, expired within its ttl', $gone && !$grew && $took < 1.1, sprintf('%.3f s', $took));
$gen3 = $pool->waitReplaced($gen2);
check('all 3 workers recycled again', count($gen3) === 3 && array_intersect($gen2, $gen3) === [],
    json_encode([$gen2, $gen3]));

// New workers take the expired locks.
$c = round_of_3($pool, 'hold.php', $q('lease', ['ttl' => 5, 'end' => 'release']));
check('new workers acquire the same keys', count(array_filter($c, fn ($x) => ($x['acquired'] ?? false) && $x['released'])) === 3,
    json_encode($c));
check('nothing left in Redis', redis_keys_left($url) === [], json_encode(redis_keys_left($url)));
preg_match_all('/child \d+ exited with code 0/', $pool->log(), $m);
echo count($m[0]), " workers exited with code 0\n";
check('no worker crashed', $pool->abnormalExits() === [], implode("\n", $pool->abnormalExits()));
$pool->stop();
?>
--EXPECT--
last request of each worker held a lock; gone at once after the response: ok
all 3 workers recycled: ok
renewed while the request ran (ours for 1.3 s, > 2 renewals each): ok
left in Redis after the response with what remains of its lease: ok
never renewed after the request, expired within its ttl: ok
all 3 workers recycled again: ok
new workers acquire the same keys: ok
nothing left in Redis: ok
6 workers exited with code 0
no worker crashed: ok

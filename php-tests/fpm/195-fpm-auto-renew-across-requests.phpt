--TEST--
PHP-FPM: auto_renew works in request after request of the same worker (a 0.6 s lease held for 1.8 s stays ours), and renewal stops when the request ends (released; with auto_release off the key expires, and the idle worker renews nothing)
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
$ttl = 0.6;

/** One renew.php request per worker at once; checks they held throughout and ran on all workers. */
function renew_round(FpmPool $pool, string $url, string $name, array $options, array $workers, float $ttl): array
{
    $list = [];
    for ($i = 0; $i < 3; $i++) {
        $list[] = ['renew.php', ['url' => $url, 'key' => "$name:$i", 'ttl' => $ttl, 'hold' => 3 * $ttl,
                                 'opts' => json_encode(['auto_renew' => true] + $options)]];
    }
    $answers = array_map(fn ($r) => $r['json'], $pool->requests($list, 6.0));
    $pids = array_column($answers, 'pid');
    sort($pids);
    $held = array_filter($answers, fn ($a) => $a && $a['acquired'] && $a['ours_throughout'] && $a['is_acquired']
                                              && $a['min_pttl'] > 0 && $a['renewals'] >= 4);
    check("$name: each worker held a $ttl s lease for 3 lease lengths, renewed", count($held) === 3 && $pids === $workers,
        json_encode($answers));
    return $answers;
}

$keys = ['first:0', 'first:1', 'first:2'];
renew_round($pool, $url, 'first', [], $workers, $ttl);
check('first: released at the end of the request', array_sum(array_map(fn ($k) => redis_cmd($url, 'EXISTS', $k), $keys)) === 0);

// The second request of each worker renews again; with auto_release off the
// key outlives the request, but is no longer renewed.
$second = renew_round($pool, $url, 'kept', ['auto_release' => false], $workers, $ttl);
$t_response = hrtime(true);
$keys = ['kept:0', 'kept:1', 'kept:2'];
$tokens = array_map(fn ($k) => redis_cmd($url, 'GET', $k), $keys);
check('kept: still ours right after the response', $tokens == array_column($second, 'token'), json_encode($tokens));
$last = array_combine($keys, array_map(fn ($k) => redis_cmd($url, 'PTTL', $k), $keys));
$grew = false;
$gone = wait_until(function () use ($url, &$last, &$grew) {
    $left = 0;
    foreach ($last as $k => $p0) {
        $p = redis_cmd($url, 'PTTL', $k);
        if ($p > 0) {
            $grew = $grew || $p > $p0;
            $last[$k] = $p;
            $left++;
        }
    }
    return $left === 0;
}, 3.0);
check('kept: never renewed after the request, expired at the end of its lease', $gone && !$grew && since($t_response) < $ttl + 0.5,
    sprintf('%.3f s', since($t_response)));

// Idle workers renew nothing (their renewals counters stand still).
$stats = function () use ($pool) {
    $list = array_fill(0, 3, ['stats.php', ['sleep_ms' => 150]]);
    $by = [];
    foreach ($pool->requests($list, 5.0) as $r) {
        $by[$r['json']['pid'] ?? 0] = $r['json']['stats']['renewals'] ?? null;
    }
    ksort($by);
    return $by;
};
$s1 = $stats();
usleep(500000);
$s2 = $stats();
check('idle workers renew nothing', array_keys($s1) === $workers && $s1 === $s2, json_encode([$s1, $s2]));
check('nothing left in Redis', redis_keys_left($url) === [], json_encode(redis_keys_left($url)));
check('no worker crashed or was replaced', $pool->abnormalExits() === [] && $pool->workers() === $workers,
    implode("\n", $pool->abnormalExits()));
$pool->stop();
?>
--EXPECT--
first: each worker held a 0.6 s lease for 3 lease lengths, renewed: ok
first: released at the end of the request: ok
kept: each worker held a 0.6 s lease for 3 lease lengths, renewed: ok
kept: still ours right after the response: ok
kept: never renewed after the request, expired at the end of its lease: ok
idle workers renew nothing: ok
nothing left in Redis: ok
no worker crashed or was replaced: ok

--TEST--
PHP-FPM: a worker killed while holding an auto-renewed lock (SIGKILL, or SIGTERM from request_terminate_timeout) leaves it only until its lease ends; then another request acquires it
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
$ttl = 1.0;
$opts = '{"auto_renew":true}';

/**
 * Sends a request that takes $key with a renewed 1 s lease and then sleeps
 * 8 s; returns [request handle, holder pid, token] once it holds it.
 */
function start_holder(FpmPool $pool, string $url, string $key, string $opts, float $ttl): array
{
    $h = $pool->send('hold.php', ['url' => $url, 'key' => $key, 'ttl' => $ttl, 'opts' => $opts,
                                  'pid_key' => "$key:pid", 'sleep_ms' => 8000]);
    wait_until(fn () => redis_cmd($url, 'EXISTS', "$key:pid") === 1, 3.0);
    return [$h, (int) redis_cmd($url, 'GET', "$key:pid"), redis_cmd($url, 'GET', $key)];
}

/** After the holder died at $t_dead: the key stays until its lease ends, then another request gets it. */
function after_death(FpmPool $pool, string $url, string $key, string $token, int $t_dead, float $ttl): void
{
    $try = $pool->request('hold.php', ['url' => $url, 'key' => $key, 'ttl' => 5, 'end' => 'release']);
    check('  meanwhile another request cannot take it', ($try['json']['acquired'] ?? null) === false, json_encode($try));
    // Waits in the queue (woken when the dead holder's lease ends).
    $res = $pool->request('hold.php', ['url' => $url, 'key' => $key, 'ttl' => 5, 'wait' => 3, 'end' => 'release'], 5.0);
    $after = since($t_dead);
    check('  a waiting request acquires it once the lease ended (within ttl + 0.5 s)',
        ($res['json']['acquired'] ?? false) && $res['json']['released'] && $after < $ttl + 0.5,
        sprintf('%.3f s after the death; %s', $after, json_encode($res)));
    redis_cmd($url, 'DEL', "$key:pid");
}

// SIGKILL of the holding worker.
$pool = FpmPool::start();
$workers = $pool->workers();
[$h, $pid, $token] = start_holder($pool, $url, 'killed', $opts, $ttl);
check('a worker holds the lock', in_array($pid, $workers, true) && is_string($token), "$pid " . json_encode($token));
usleep(1200000);                       // past the first lease: renewed by the thread
check('renewed past its first lease', redis_cmd($url, 'GET', 'killed') === $token);
posix_kill_pid($pid, SIGKILL);
$t_kill = hrtime(true);
$res = $pool->wait($h, 3.0);
check('the killed request ends without an answer', $res['json'] === null && $res['exit'] !== 'hung (killed)', json_encode($res));
$pttl = redis_cmd($url, 'PTTL', 'killed');
check('the key stays, with at most its ttl left', redis_cmd($url, 'GET', 'killed') === $token && $pttl > 0 && $pttl <= 1000, "$pttl");
after_death($pool, $url, 'killed', $token, $t_kill, $ttl);
$now = $pool->waitReplaced([$pid]);
check('the master replaced the killed worker', count($now) === 3 && !in_array($pid, $now, true), json_encode($now));
check('no other worker died', $pool->abnormalExits([$pid]) === [] && str_contains($pool->log(), "child $pid exited on signal 9"),
    $pool->log());
$pool->stop();

// SIGTERM from the master: request_terminate_timeout 1 s.
$pool = FpmPool::start([], ['request_terminate_timeout' => '1s']);
[$h, $pid, $token] = start_holder($pool, $url, 'terminated', $opts, $ttl);
$res = $pool->wait($h, 4.0);
$t_end = hrtime(true);
$pttl = redis_cmd($url, 'PTTL', 'terminated');
check('request_terminate_timeout ends the request, the key stays',
    $res['json'] === null && $res['seconds'] < 3.0 && redis_cmd($url, 'GET', 'terminated') === $token && $pttl > 0 && $pttl <= 1000,
    sprintf('%.2f s, pttl %d, %s', $res['seconds'], $pttl, json_encode($res)));
after_death($pool, $url, 'terminated', $token, $t_end, $ttl);
check('the master killed that worker by SIGTERM and replaced it',
    str_contains($pool->log(), "child $pid exited on signal 15") && count($pool->waitReplaced([$pid])) === 3, $pool->log());
check('no other worker died', $pool->abnormalExits([$pid]) === [], implode("\n", $pool->abnormalExits([$pid])));
$pool->stop();
check('nothing left in Redis', redis_keys_left($url) === [], json_encode(redis_keys_left($url)));
?>
--EXPECT--
a worker holds the lock: ok
renewed past its first lease: ok
the killed request ends without an answer: ok
the key stays, with at most its ttl left: ok
  meanwhile another request cannot take it: ok
  a waiting request acquires it once the lease ended (within ttl + 0.5 s): ok
the master replaced the killed worker: ok
no other worker died: ok
request_terminate_timeout ends the request, the key stays: ok
  meanwhile another request cannot take it: ok
  a waiting request acquires it once the lease ended (within ttl + 0.5 s): ok
the master killed that worker by SIGTERM and replaced it: ok
no other worker died: ok
nothing left in Redis: ok

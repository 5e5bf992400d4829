--TEST--
auto_renew and fork: a child neither renews nor believes it holds its parent's auto-renewed lock, and can renew its own
--EXTENSIONS--
redislock
--SKIPIF--
<?php require __DIR__ . '/../skipif.inc'; ?>
--FILE--
<?php
require __DIR__ . '/../config.inc';
require __DIR__ . '/../children.inc';
$url = redislock_test_url();
$key = redislock_test_key('renew-fork');
$child_key = redislock_test_key('renew-fork-child');
$results = tempnam(sys_get_temp_dir(), 'redislock-fork-');

$lock = new RedisLock($key, 0.6, $url, ['auto_renew' => true]);
var_dump($lock->acquire());
$token = $lock->token();
$t0 = hrtime(true);

$pid = pcntl_fork();
if ($pid === 0) {
    // The child: uses only the extension (the parent's redis_cmd socket is not ours).
    $r = [];
    $r['token'] = $lock->token();
    $r['isAcquired'] = $lock->isAcquired();
    $r['refresh'] = $lock->refresh();
    $r['remainingTtl'] = $lock->remainingTtl();
    $own = new RedisLock($child_key, 0.3, $url, ['auto_renew' => true]);
    $r['own acquire'] = $own->acquire();
    usleep(900000);                              // three times its ttl
    $left = $own->remainingTtl();
    $r['own renewed'] = $left !== null && $left > 0.05 && $left <= 0.3;
    $r['own isAcquired'] = $own->isAcquired();
    while (since($t0) < 1.6) {                   // outlive the parent's release by ~0.5 s
        usleep(20000);
    }
    $r['own release'] = $own->release();
    file_put_contents($results, json_encode($r));
    child_exit(0);
}

usleep(800000);                                  // past the ttl: the parent's renewal still works
check('parent still holds it', redis_cmd($url, 'GET', $key) === $token);
var_dump($lock->isAcquired());
var_dump($lock->release());
$resurrected = 0;
while (since($t0) < 1.7) {
    $resurrected += redis_cmd($url, 'EXISTS', $key);
    usleep(20000);
}
check('gone and stays gone while the child lives', $resurrected === 0, "seen $resurrected times");

$status = 0;
$done = wait_until(function () use ($pid, &$status) {
    return pcntl_waitpid($pid, $status, WNOHANG) === $pid;
}, 2.0);
if (!$done) {
    posix_kill_pid($pid, SIGKILL);
    pcntl_waitpid($pid, $status);
}
check('child ended', $done && pcntl_wifexited($status) && pcntl_wexitstatus($status) === 0);
foreach (json_decode((string) file_get_contents($results), true) ?? [] as $what => $v) {
    echo "child $what: ", var_export($v, true), "\n";
}
unlink($results);
var_dump(redis_cmd($url, 'EXISTS', $key, $child_key));
?>
--EXPECT--
bool(true)
parent still holds it: ok
bool(true)
bool(true)
gone and stays gone while the child lives: ok
child ended: ok
child token: NULL
child isAcquired: false
child refresh: false
child remainingTtl: NULL
child own acquire: true
child own renewed: true
child own isAcquired: true
child own release: true
int(0)

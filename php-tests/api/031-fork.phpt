--TEST--
fork: a child never believes it holds its parent's locks, uses its own connection, and leaves them to the parent
--EXTENSIONS--
redislock
--SKIPIF--
<?php require __DIR__ . '/../skipif.inc'; ?>
--FILE--
<?php
require __DIR__ . '/../config.inc';
require __DIR__ . '/../children.inc';
$url = redislock_test_url();
$key = redislock_test_key('fork-parent');
$child_key = redislock_test_key('fork-child');
$results = tempnam(sys_get_temp_dir(), 'redislock-fork-');


$lock = redislock_test_lock($key, 10);
var_dump($lock->acquire());
$token = $lock->token();
var_dump(redis_cmd($url, 'GET', redislock_test_stored_key($key)) === $token);

$pid = pcntl_fork();
if ($pid === 0) {
    $r = [];
    $r['token'] = $lock->token();
    $r['isAcquired'] = $lock->isAcquired();
    $r['remainingTtl'] = $lock->remainingTtl();
    $r['refresh'] = $lock->refresh(1);
    $r['release'] = $lock->release();
    $same = redislock_test_lock($key, 10);       // not reentrant across processes
    $r['acquire parent key'] = $same->acquire();
    $own = redislock_test_lock($child_key, 10);
    $r['acquire own key'] = $own->acquire();
    $ok = 0;
    for ($i = 0; $i < 200; $i++) {               // busy on its connection while the parent is on its own
        $ok += $own->isAcquired() && $own->refresh(10) ? 1 : 0;
    }
    $r['own key checks'] = $ok;
    file_put_contents($results, json_encode($r));
    child_exit(0);                               // ends normally, holding $own
}
$ok = 0;
for ($i = 0; $i < 200; $i++) {
    $ok += $lock->isAcquired() && $lock->refresh(10) ? 1 : 0;
}
var_dump($ok);
var_dump(pcntl_waitpid($pid, $status) === $pid);
var_dump(pcntl_wexitstatus($status));
foreach (json_decode(file_get_contents($results), true) as $what => $v) {
    echo "child $what: ", var_export($v, true), "\n";
}
unlink($results);

var_dump(redis_cmd($url, 'GET', redislock_test_stored_key($key)) === $token);
$pttl = redis_cmd($url, 'PTTL', redislock_test_stored_key($key));
var_dump($pttl > 2000 && $pttl <= 10000);        // the child's refresh(1) did nothing
var_dump(redis_cmd($url, 'EXISTS', $child_key)); // released when the child ended
var_dump($lock->token() === $token);
var_dump($lock->isAcquired());
var_dump($lock->release());
var_dump(redis_cmd($url, 'EXISTS', redislock_test_stored_key($key)));
?>
--EXPECT--
bool(true)
bool(true)
int(200)
bool(true)
int(0)
child token: NULL
child isAcquired: false
child remainingTtl: NULL
child refresh: false
child release: false
child acquire parent key: false
child acquire own key: true
child own key checks: 200
bool(true)
bool(true)
int(0)
bool(true)
bool(true)
bool(true)
int(0)

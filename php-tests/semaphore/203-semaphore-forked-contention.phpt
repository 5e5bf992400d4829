--TEST--
Semaphore: 8 forked children contending for 3 permits never hold more than 3 at once, and all get their turns
--EXTENSIONS--
redislock
--SKIPIF--
<?php require __DIR__ . '/../skipif.inc'; if (getenv('REDISLOCK_TEST_TOPOLOGY') === 'redlock') die('skip semaphores refuse Redlock'); ?>
--FILE--
<?php
require __DIR__ . '/../config.inc';
require __DIR__ . '/../children.inc';
use RedisLock\Semaphore;
$url = redislock_test_url();
$name = redislock_test_key('sem-fork');
$inside = redislock_test_stored_key($name) . ':inside';
$holders = redislock_test_stored_key($name) . '~~s';
$results = tempnam(sys_get_temp_dir(), 'redislock-sem-');
$pids = [];
for ($i = 0; $i < 8; $i++) {
    $pid = pcntl_fork();
    if ($pid === 0) {
        $s = new Semaphore($name, 3, 10, redislock_test_servers(), redislock_test_options());
        $max = 0;
        $got = 0;
        for ($j = 0; $j < 10; $j++) {
            if (!$s->acquire(20)) {
                continue;
            }
            $got++;
            $max = max($max, redis_cmd($url, 'INCR', $inside));
            usleep(3000);
            redis_cmd($url, 'DECR', $inside);
            $s->release();
        }
        file_put_contents($results, "$got $max\n", FILE_APPEND | LOCK_EX);
        child_exit(0);
    }
    $pids[] = $pid;
}
foreach ($pids as $pid) {
    pcntl_waitpid($pid, $status);
}
$got = 0;
$max = 0;
foreach (file($results, FILE_IGNORE_NEW_LINES) as $line) {
    [$g, $m] = explode(' ', $line);
    $got += $g;
    $max = max($max, $m);
}
unlink($results);
echo "children reporting: ", count($pids), "\n";
echo "permits taken: $got\n";
check('never more than 3 holders', $max <= 3, "max $max");
check('the permits were contended', $max >= 2, "max $max");
var_dump(redis_keys_left($url, "$holders*"));
redis_cmd($url, 'DEL', $inside);
?>
--EXPECT--
children reporting: 8
permits taken: 80
never more than 3 holders: ok
the permits were contended: ok
array(0) {
}

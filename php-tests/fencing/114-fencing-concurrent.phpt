--TEST--
fencing: 4 processes x 250 acquires get distinct fencing tokens that increase in acquisition order; null when not held or without the option
--EXTENSIONS--
redislock
--SKIPIF--
<?php require __DIR__ . '/../skipif.inc'; ?>
--FILE--
<?php
require __DIR__ . '/../config.inc';
require __DIR__ . '/../children.inc';
// A server of its own: its fencing counter (`~~fence`, one per prefix and
// server) counts this test's acquires only.
$redis = TestRedis::start();
$url = $redis->url();
$key = redislock_test_key('fencing');
$log = redislock_test_key('fencing-log');

$plain = new RedisLock($key, 5, $url);
var_dump($plain->fencingToken());
var_dump($plain->acquire(), $plain->fencingToken(), $plain->release());
$fenced = new RedisLock($key, 5, $url, ['fencing' => true]);
var_dump($fenced->fencingToken());

// Each process appends "process:token" to a list while it holds the lock,
// so the list is in acquisition order. They mix the three ways to get the
// lock: a free SET, a blocking acquire that finds it free, a handoff.
$workers = [];
for ($p = 0; $p < 4; $p++) {
    $workers[] = spawn_php(sprintf('
        $url = %s; $log = %s;
        $l = new RedisLock(%s, 5, $url, ["fencing" => true]);
        $bad = 0;
        redis_cmd($url, "INCR", $log . ":ready");     // start together
        wait_until(fn () => redis_cmd($url, "GET", $log . ":ready") === "go");
        for ($i = 0; $i < 250; $i++) {
            $got = ($i %% 2 === 0 && $l->acquire()) || $l->acquire(3.0);
            if (!$got) { echo "timed out\n"; exit(1); }
            $f = $l->fencingToken();
            if (!is_int($f)) { $bad++; }
            redis_cmd($url, "RPUSH", $log, "%d:" . var_export($f, true));
            $l->release();
            if ($l->fencingToken() !== null) { $bad++; }
        }
        echo "done $bad\n";',
        var_export($url, true), var_export($log, true), var_export($key, true), $p));
}
check('all ready', wait_until(fn () => redis_cmd($url, 'GET', $log . ':ready') === '4'));
redis_cmd($url, 'SET', $log . ':ready', 'go');
foreach ($workers as $p => $w) {
    [$code, $out] = finish_php($w, 8.0);
    check("process $p", $code === 0 && trim($out) === 'done 0', "$code: $out");
}
$entries = redis_cmd($url, 'LRANGE', $log, '0', '-1');
$tokens = array_map(fn ($e) => (int) explode(':', $e)[1], $entries);
$per_process = array_count_values(array_map(fn ($e) => explode(':', $e)[0], $entries));
ksort($per_process);
echo "per process: ", implode(',', $per_process), "\n";
check('1000 tokens, all distinct', count($tokens) === 1000 && count(array_unique($tokens)) === 1000);
$increasing = true;
for ($i = 1; $i < count($tokens); $i++) {
    if ($tokens[$i] <= $tokens[$i - 1]) {
        $increasing = false;
        echo "not increasing at $i: {$entries[$i - 1]} then {$entries[$i]}\n";
        break;
    }
}
check('strictly increasing in acquisition order', $increasing);
check('the counter is the last token', (int) redis_cmd($url, 'GET', '~~fence') === end($tokens));
$switches = 0;
for ($i = 1; $i < count($entries); $i++) {
    $switches += explode(':', $entries[$i])[0] !== explode(':', $entries[$i - 1])[0] ? 1 : 0;
}
check('the processes interleaved', $switches >= 100, "$switches switches");

var_dump($fenced->acquire());
check('a later acquire gets a greater token', $fenced->fencingToken() > end($tokens), var_export($fenced->fencingToken(), true));
var_dump($fenced->release(), $fenced->fencingToken());
var_dump((redis_cmd($url, 'EXISTS', $key, $key . '~~q') + count(redis_cmd($url, 'KEYS', $key . '~~a~*'))));
redis_cmd($url, 'DEL', $log, $log . ':ready');
?>
--EXPECT--
NULL
bool(true)
NULL
bool(true)
NULL
all ready: ok
process 0: ok
process 1: ok
process 2: ok
process 3: ok
per process: 250,250,250,250
1000 tokens, all distinct: ok
strictly increasing in acquisition order: ok
the counter is the last token: ok
the processes interleaved: ok
bool(true)
a later acquire gets a greater token: ok
bool(true)
NULL
int(0)

--TEST--
Read holds: readers queued behind a writer (several processes) all enter at its release and read at the same time
--EXTENSIONS--
redislock
--SKIPIF--
<?php require __DIR__ . '/../skipif.inc'; ?>
--FILE--
<?php
require __DIR__ . '/../config.inc';
require __DIR__ . '/../children.inc';
const READERS = 4;
$url = redislock_test_url();
$key = redislock_test_key('read-batch');
$inside = "$key:inside";

$writer = new RedisLock($key, 10, $url);
check('the writer holds the lock', $writer->acquire());
// Each reader waits up to 8 s (retry_delay 5 s: woken, not looking for
// itself), then counts itself in, reads for 0.5 s and counts itself out;
// it prints how many were inside when it came in.
$readers = [];
for ($i = 0; $i < READERS; $i++) {
    $readers[] = spawn_php(sprintf('
        $r = new RedisLock(%s, 10, %s, ["retry_delay" => 5.0]);
        if (!$r->acquireRead(8.0)) { echo "gave up\n"; exit(1); }
        $n = redis_cmd(%s, "INCR", %s);
        usleep(500000);
        redis_cmd(%s, "DECR", %s);
        echo $r->release() ? "inside with $n\n" : "release failed\n";',
        var_export($key, true), var_export($url, true),
        var_export($url, true), var_export($inside, true), var_export($url, true), var_export($inside, true)));
}
check('every reader queues behind the writer',
    wait_until(fn () => redis_cmd($url, 'ZCARD', "$key~~q") === READERS, 5.0),
    (string) redis_cmd($url, 'ZCARD', "$key~~q"));
check('nobody reads while the writer writes', redis_cmd($url, 'GET', $inside) === null);
$t0 = hrtime(true);
check('the writer releases', $writer->release());
$most = 0;
foreach ($readers as $i => $reader) {
    $line = read_line($reader);
    [$code, $rest] = finish_php($reader);
    if (!preg_match('/^inside with (\d+)$/', $line, $m) || $code !== 0) {
        echo "reader $i: $line, exit $code $rest\n";
        continue;
    }
    $most = max($most, (int) $m[1]);
}
$all_done = since($t0);
check('all readers were inside at once', $most === READERS, "at most $most");
// Together they are done about 0.5 s after the release; a reader that
// was not woken (each that enters wakes the next) would come 5 s late.
check('all woken at the release', $all_done < 4.0, sprintf('%.3f s', $all_done));
check('nothing left', redis_keys_left($url, "$key*") === ["$key:inside"], implode(' ', redis_keys_left($url, "$key*")));
redis_cmd($url, 'DEL', $inside);
?>
--EXPECT--
the writer holds the lock: ok
every reader queues behind the writer: ok
nobody reads while the writer writes: ok
the writer releases: ok
all readers were inside at once: ok
all woken at the release: ok
nothing left: ok

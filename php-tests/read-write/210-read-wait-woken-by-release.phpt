--TEST--
Read holds: a blocked acquireRead($wait) is woken by another process's write release, without polling Redis
--EXTENSIONS--
redislock
--SKIPIF--
<?php require __DIR__ . '/../skipif.inc'; ?>
--FILE--
<?php
require __DIR__ . '/../config.inc';
require __DIR__ . '/../children.inc';
// A private server, so that only this test's commands are counted.
$server = TestRedis::start();
$url = $server->url();
$key = redislock_test_key('read-woken');
function commands_processed(string $url): int
{
    preg_match('/^total_commands_processed:(\d+)/m', redis_cmd($url, 'INFO', 'stats'), $m);
    return (int) $m[1];
}

// The writer holds the lock for 10 s and releases it 1 s after it says so.
$writer = spawn_php(sprintf('
    $w = new RedisLock(%s, 10, %s);
    if (!$w->acquire()) { echo "acquire failed\n"; exit(1); }
    echo "writing\n";
    usleep(1000000);
    echo $w->release() ? "released\n" : "release failed\n";',
    var_export($key, true), var_export($url, true)));
check('the writer holds the lock', read_line($writer) === 'writing');

// retry_delay 5 s: a reader that looked for itself instead of being woken
// would come about 5 s late.
$reader = new RedisLock($key, 10, $url, ['retry_delay' => 5.0]);
check('a try fails while the writer holds it', $reader->acquireRead() === false);   // also connects
$before = commands_processed($url);
$t0 = hrtime(true);
$got = $reader->acquireRead(8.0);
$waited = since($t0);
$sent = commands_processed($url) - $before - 1;   // minus the first INFO
check('the reader gets in', $got);
check('woken by the release, not a 5 s fallback', $waited < 3.0, sprintf('%.3f s', $waited));
check('the writer released first', read_line($writer) === 'released');
// A join step, one BLPOP, the woken step, and the writer's release (each
// script counts the commands it runs); a loop would send hundreds.
check('no polling', $sent <= 100, "$sent commands in $waited s");
check('reading', $reader->isAcquired() && redis_cmd($url, 'GET', $key) === '~~read');
[$code, $rest] = finish_php($writer);
check('the writer ended', $code === 0, "$code $rest");
check('released', $reader->release());
check('nothing left', redis_keys_left($url) === [], implode(' ', redis_keys_left($url)));
?>
--EXPECT--
the writer holds the lock: ok
a try fails while the writer holds it: ok
the reader gets in: ok
woken by the release, not a 5 s fallback: ok
the writer released first: ok
no polling: ok
reading: ok
the writer ended: ok
released: ok
nothing left: ok

--TEST--
signals: SIGUSR1 every millisecond during new/acquire/release/unset cycles fails no call and leaves no key behind
--EXTENSIONS--
redislock
pcntl
--SKIPIF--
<?php require __DIR__ . '/../skipif.inc'; ?>
--FILE--
<?php
require __DIR__ . '/../config.inc';
require __DIR__ . '/../children.inc';
$url = redislock_test_url();
$key = redislock_test_key('storm-calls');

// The process under the storm: the issue's reproduction, with a probe lock
// after each cycle to find a key its object left behind.
$child = spawn_php(sprintf('
    pcntl_async_signals(true);
    $signals = 0;
    pcntl_signal(SIGUSR1, function () use (&$signals) { $signals++; });
    $key = %s; $url = %s;
    $probe = new RedisLock($key, 30.0, $url);
    $cycles = $errors = $left = 0;
    $messages = [];
    echo "ready\n";
    $end = hrtime(true) + 2e9;
    while (hrtime(true) < $end) {
        try {
            $l = new RedisLock($key, 30.0, $url);
            if (!$l->acquire()) { $errors++; $messages[] = "not acquired"; }
            if (!$l->release()) { $errors++; $messages[] = "not released"; }
            unset($l);
            if ($probe->acquire()) { $probe->release(); } else { $left++; $probe->forceRelease(); }
            $cycles++;
        } catch (Throwable $e) {
            $errors++;
            $messages[] = get_class($e) . ": " . $e->getMessage();
        }
    }
    echo json_encode(compact("cycles", "errors", "left", "signals") + ["messages" => array_slice(array_unique($messages), 0, 3)]), "\n";',
    var_export($key, true), var_export($url, true)));
check('child ready', read_line($child) === 'ready');
$sent = 0;
$end = hrtime(true) + 2.0e9;   // (its loop runs 2 s from "ready")
while (hrtime(true) < $end) {
    proc_terminate($child[0], SIGUSR1);
    $sent++;
    usleep(1000);
}
[$code, $out] = finish_php($child, 10);
$r = json_decode($out, true);
check('child finished', $code === 0 && is_array($r), "$code: $out");
check('many cycles under many signals', ($r['cycles'] ?? 0) > 200 && ($r['signals'] ?? 0) > 300, $out);
check('no call failed', ($r['errors'] ?? -1) === 0, $out);
check('no key left behind', ($r['left'] ?? -1) === 0, $out);
var_dump(redis_cmd($url, 'EXISTS', $key));
?>
--EXPECT--
child ready: ok
child finished: ok
many cycles under many signals: ok
no call failed: ok
no key left behind: ok
int(0)

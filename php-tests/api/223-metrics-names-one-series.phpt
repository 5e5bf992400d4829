--TEST--
Hot names in stats() and metrics(): one series per name and primitive, valid UTF-8 (names that share their first 96 bytes, names cut inside a character, names with invalid UTF-8 bytes get a ~~ hash suffix)
--EXTENSIONS--
redislock
--SKIPIF--
<?php require __DIR__ . '/../skipif.inc'; redislock_skip_unless_single('counts on one server of its own');
if (trim((string) shell_exec('command -v promtool')) === '') die('skip promtool is not installed (apt-get install prometheus)'); ?>
--FILE--
<?php
require __DIR__ . '/../config.inc';
require __DIR__ . '/../children.inc';
$server = TestRedis::start();
$url = $server->url();
$base = redislock_test_key('n96');
$pad = str_repeat('A', 96 - strlen($base));
$names = [
    'alike-1' => $base . $pad . '-one',           // the first 96 bytes alike
    'alike-2' => $base . $pad . '-two',
    'cut-in-char' => $base . substr($pad, 1) . 'é',  // byte 96 is half an 'é'
    'invalid-1' => $base . "inv\xffx",              // alike but an invalid byte
    'invalid-2' => $base . "inv\xfex",
    'plain' => $base . 'plain-é',
];
foreach ($names as $name) {
    // A contended acquire: the second object's wait runs out.
    $a = new RedisLock($name, 10, $url);
    $b = new RedisLock($name, 10, $url, ['reentrant' => false]);
    $a->acquire();
    $b->acquire(0.01);
    $a->release();
}
$stats = RedisLock::stats('process');
$json = json_encode($stats);
check('json_encode(stats()) works', $json !== false, json_last_error_msg());
$labels = [];
foreach ($stats['names'] as $row) {
    if ($row['primitive'] === 'lock' && str_starts_with($row['name'], $base)) {
        $labels[] = $row['name'];
    }
}
check('one label per name', count($labels) === count($names) && count(array_unique($labels)) === count($names),
    json_encode($labels, JSON_INVALID_UTF8_SUBSTITUTE));
check('every label is valid UTF-8', array_filter($labels, fn ($l) => preg_match('//u', $l) !== 1) === []);
check('a valid name kept whole is itself', in_array($names['plain'], $labels, true));
$suffixed = array_filter($labels, fn ($l) => preg_match('/~~[0-9a-f]{16}$/', $l));
check('the cut and invalid names end in ~~ and 16 hex digits', count($suffixed) === 5, json_encode(array_values($suffixed), JSON_INVALID_UTF8_SUBSTITUTE));

$text = RedisLock::metrics();
$series = [];
foreach (explode("\n", $text) as $line) {
    if (preg_match('/^(redislock_name_contended_total\{.*\}) \S+$/', $line, $m)) {
        $series[] = $m[1];
    }
}
check('metrics(): no label set twice', count($series) === count(array_unique($series)) && count($series) >= count($names));
check('metrics() is valid UTF-8', preg_match('//u', $text) === 1);
$proc = proc_open(['promtool', 'check', 'metrics'], [0 => ['pipe', 'r'], 1 => ['pipe', 'w'], 2 => ['redirect', 1]], $pipes);
fwrite($pipes[0], $text);
fclose($pipes[0]);
$said = stream_get_contents($pipes[1]);
check('promtool check metrics accepts it', proc_close($proc) === 0 && trim($said) === '', $said);
?>
--EXPECT--
json_encode(stats()) works: ok
one label per name: ok
every label is valid UTF-8: ok
a valid name kept whole is itself: ok
the cut and invalid names end in ~~ and 16 hex digits: ok
metrics(): no label set twice: ok
metrics() is valid UTF-8: ok
promtool check metrics accepts it: ok

--TEST--
phpinfo() and php --ri redislock show the section with version and settings, server passwords masked
--EXTENSIONS--
redislock
--FILE--
<?php
require __DIR__ . '/../config.inc';
[$code, $out] = redislock_run_child('phpinfo(INFO_MODULES);', ['redislock.servers' => 'redis://:topsecret@127.0.0.1:1']);
var_dump($code);
var_dump(str_contains($out, 'redislock support => enabled'));
var_dump(str_contains($out, 'Version => ' . phpversion('redislock')));
var_dump(str_contains($out, 'redislock.servers => redis://:***@127.0.0.1:1/0'));
var_dump(str_contains($out, 'topsecret'));

// A list, an ACL user, a unix socket and a malformed URL: all masked.
$list = 'redis://alice:topsecret@127.0.0.1:1/2, unix:///tmp/r.sock?password=topsecret, redis://:topsecret@h:bad';
[$code, $out] = redislock_run_child('phpinfo(INFO_MODULES); echo "\nini_get ok: ", ini_get("redislock.servers") !== false ? "yes" : "no", "\n";',
    ['redislock.servers' => '"' . $list . '"']);
var_dump($code);
preg_match('/^redislock\.servers => (.*)$/m', $out, $m);
echo $m[1] ?? 'no servers row', "\n";
var_dump(str_contains($out, 'topsecret'));

// php --ri redislock
$cmd = [PHP_BINARY, '-n', '-d', 'extension=' . redislock_extension_path(),
        '-d', 'redislock.servers=rediss://bob:topsecret@127.0.0.1:6380/5', '--ri', 'redislock'];
$proc = proc_open($cmd, [0 => ['file', '/dev/null', 'r'], 1 => ['pipe', 'w'], 2 => ['redirect', 1]], $pipes);
$out = stream_get_contents($pipes[1]);
fclose($pipes[1]);
var_dump(proc_close($proc));
var_dump(str_contains($out, 'redislock support => enabled'));
var_dump(str_contains($out, 'rediss://bob:***@127.0.0.1:6380/5'));
var_dump(str_contains($out, 'topsecret'));
foreach (['redislock.default_ttl => 30', 'redislock.connect_timeout => 2', 'redislock.read_timeout => 2'] as $row) {
    echo $row, ': ', str_contains($out, $row) ? 'shown' : 'missing', "\n";
}
?>
--EXPECT--
int(0)
bool(true)
bool(true)
bool(true)
bool(false)
int(0)
redis://alice:***@127.0.0.1:1/2, unix:///tmp/r.sock?db=0&password=***, redis://:***@h:bad
bool(false)
int(0)
bool(true)
bool(true)
bool(false)
redislock.default_ttl => 30: shown
redislock.connect_timeout => 2: shown
redislock.read_timeout => 2: shown

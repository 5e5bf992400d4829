--TEST--
Read holds: a read hold still open at request end (also after a fatal error) or at object destruction is released; auto_release => false leaves it to its lease
--EXTENSIONS--
redislock
--SKIPIF--
<?php require __DIR__ . '/../skipif.inc'; ?>
--FILE--
<?php
require __DIR__ . '/../config.inc';
$url = redislock_test_url();
$key = redislock_test_key('read-end');
// A lone reader's lock key holds "~~read:<token>": shown as the read mark.
$state = fn () => sprintf('lock %s, readers %d',
    redis_read_held($url, $key) ? "'~~read'" : var_export(redis_cmd($url, 'GET', $key), true),
    redis_readers($url, $key));
$child = fn (string $tail, array $options = [], bool $fatal = false) => redislock_run_child(sprintf(
    "\$GLOBALS['forgotten'] = new RedisLock(%s, 30, %s, %s);\nvar_dump(\$GLOBALS['forgotten']->acquireRead());\n%s",
    var_export($key, true), var_export($url, true), var_export($options, true), $tail), [], $fatal);

[$code, $out] = $child('');
echo "ends without release: ", trim($out), " exit $code, ", $state(), "\n";
[$code, $out] = $child('undefined_function();', [], true);
echo "fatal error: ", trim(strtok($out, "\n")), " exit $code, ", $state(), "\n";
[$code, $out] = $child(sprintf('unset($GLOBALS["forgotten"]); echo "unset, held: ", var_export(RedisLock::inspect(%s, %s)["held"], true), "\n";',
    var_export($key, true), var_export($url, true)));
echo "object destroyed: ", str_replace("\n", ' ', trim($out)), " exit $code, ", $state(), "\n";

// auto_release off: the read hold outlives the request until its lease ends.
[$code, $out] = $child('', ['auto_release' => false]);
echo "auto_release off: ", trim($out), " exit $code, ", $state(), "\n";
$writer = new RedisLock($key, 10, $url);
var_dump($writer->acquire());
var_dump(redis_cmd($url, 'PTTL', $key) > 25000);
var_dump($writer->forceRelease(), redis_keys_left($url, "$key*"));
?>
--EXPECT--
ends without release: bool(true) exit 0, lock NULL, readers 0
fatal error: bool(true) exit 255, lock NULL, readers 0
object destroyed: bool(true) unset, held: false exit 0, lock NULL, readers 0
auto_release off: bool(true) exit 0, lock '~~read', readers 1
bool(false)
bool(true)
bool(true)
array(0) {
}

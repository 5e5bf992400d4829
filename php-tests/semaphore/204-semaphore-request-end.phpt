--TEST--
Semaphore: permits still held at request end (also after a fatal error) or at object destruction are given back; auto_release off leaves them to their lease
--EXTENSIONS--
redislock
--SKIPIF--
<?php require __DIR__ . '/../skipif.inc'; if (getenv('REDISLOCK_TEST_TOPOLOGY') === 'redlock') die('skip semaphores refuse Redlock'); ?>
--FILE--
<?php
require __DIR__ . '/../config.inc';
use RedisLock\Semaphore;
$url = redislock_test_url();
$name = redislock_test_key('sem-end');
$holders = redislock_test_stored_key($name) . '~~s';
$args = var_export([$name, redislock_test_servers(), redislock_test_options()], true);
$child = fn(string $tail, bool $fatal = false) => redislock_run_child(
    "[\$n, \$s, \$o] = $args;\n"
    . "\$GLOBALS['keep'] = new RedisLock\\Semaphore(\$n, 2, 30, \$s, \$o);\n"
    . "var_dump(\$GLOBALS['keep']->acquire());\n" . $tail,
    [], $fatal);

[$code, $out] = $child('');
echo trim($out), " exit $code, holders left: ", redis_cmd($url, 'ZCOUNT', $holders, '(0', '+inf'), "\n";
[$code, $out] = $child('undefined_function();', true);
echo trim(strtok($out, "\n")), " exit $code, holders left: ", redis_cmd($url, 'ZCOUNT', $holders, '(0', '+inf'), "\n";
[$code, $out] = $child('unset($GLOBALS["keep"]); echo redis_left(), "\n";' . "\n"
    . 'function redis_left() { return "unset"; }');
echo str_replace("\n", ' ', trim($out)), ", holders left: ", redis_cmd($url, 'ZCOUNT', $holders, '(0', '+inf'), "\n";

// auto_release off: the permit stays until its lease ends.
$off = var_export([$name, redislock_test_servers(), redislock_test_options(['auto_release' => false])], true);
[$code, $out] = redislock_run_child("[\$n, \$s, \$o] = $off;\n"
    . "\$k = new RedisLock\\Semaphore(\$n, 2, 30, \$s, \$o); var_dump(\$k->acquire());");
echo trim($out), ", holders left: ", redis_cmd($url, 'ZCOUNT', $holders, '(0', '+inf'), "\n";
redis_cmd($url, 'DEL', $holders, "$holders~~n");
?>
--EXPECT--
bool(true) exit 0, holders left: 0
bool(true) exit 255, holders left: 0
bool(true) unset, holders left: 0
bool(true), holders left: 1

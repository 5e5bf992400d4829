--TEST--
examples/recipes.php reproduces every blog recipe's race and redislock holds in each scenario
--EXTENSIONS--
redislock
pcntl
--SKIPIF--
<?php require __DIR__ . '/../skipif.inc'; ?>
--FILE--
<?php
require __DIR__ . '/../config.inc';
$url = redislock_test_url();
$example = dirname(__DIR__, 2) . '/examples/recipes.php';

// A separate php process, as a user runs it: php -n -d extension=... recipes.php URL
[$code, $out] = redislock_run_child(sprintf(
    '$argv = [%1$s, %2$s]; require %1$s;',
    var_export($example, true), var_export($url, true)));
var_dump($code);
$lines = explode("\n", trim($out));
echo end($lines), "\n";
if ($code !== 0) {
    echo $out;
}
echo substr_count($out, '[race reproduced]'), " races, ", substr_count($out, '[held]'), " held\n";
?>
--EXPECTF--
int(0)
summary: 4 of 4 races reproduced, redislock held in 4 of 4 scenarios (%f s)
4 races, 4 held

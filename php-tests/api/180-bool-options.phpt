--TEST--
options: a bool option takes a bool, 0/1 or an ini word; 'false' is false and anything else is a ValueError (never PHP's truthiness)
--EXTENSIONS--
redislock
--FILE--
<?php
$url = 'redis://127.0.0.1:1';
function flag($value): string {
    global $url;
    try {
        $l = new RedisLock('k', 5, $url, ['auto_release' => $value, 'reentrant' => $value]);
        return var_export(print_r($l, true) !== '', true) . ' (accepted)';
    } catch (Throwable $e) {
        return get_class($e) . ': ' . $e->getMessage();
    }
}
// What each value turns into, read back through auto_renew's dependency:
// on_lost => interrupt needs auto_renew => true.
function truth($value): string {
    global $url;
    try {
        new RedisLock('k', 5, $url, ['auto_renew' => $value, 'on_lost' => 'interrupt']);
        return 'true';
    } catch (ValueError $e) {
        return str_contains($e->getMessage(), 'needs auto_renew') ? 'false' : $e->getMessage();
    } catch (Throwable $e) {
        return get_class($e) . ': ' . $e->getMessage();
    }
}
foreach ([true, false, 1, 0, 1.0, 0.0, '1', '0', 'true', 'FALSE', 'On', 'off', 'yes', 'no', ''] as $v) {
    echo str_pad(var_export($v, true), 8), ' => ', truth($v), "\n";
}
echo "-- refused\n";
foreach (['yes please', 2, -1, 0.5, 'enabled'] as $v) {
    echo str_pad(var_export($v, true), 12), ' => ', truth($v), "\n";
}
echo flag([]), "\n";
echo flag(null), "\n";
?>
--EXPECT--
true     => true
false    => false
1        => true
0        => false
1.0      => true
0.0      => false
'1'      => true
'0'      => false
'true'   => true
'FALSE'  => false
'On'     => true
'off'    => false
'yes'    => true
'no'     => false
''       => false
-- refused
'yes please' => RedisLock::__construct(): Argument #4 ($options) option "auto_renew" must be a bool, 0, 1, or one of "1", "0", "true", "false", "on", "off", "yes", "no", ""
2            => RedisLock::__construct(): Argument #4 ($options) option "auto_renew" must be a bool, 0, 1, or one of "1", "0", "true", "false", "on", "off", "yes", "no", ""
-1           => RedisLock::__construct(): Argument #4 ($options) option "auto_renew" must be a bool, 0, 1, or one of "1", "0", "true", "false", "on", "off", "yes", "no", ""
0.5          => RedisLock::__construct(): Argument #4 ($options) option "auto_renew" must be a bool, 0, 1, or one of "1", "0", "true", "false", "on", "off", "yes", "no", ""
'enabled'    => RedisLock::__construct(): Argument #4 ($options) option "auto_renew" must be a bool, 0, 1, or one of "1", "0", "true", "false", "on", "off", "yes", "no", ""
TypeError: RedisLock::__construct(): Argument #4 ($options) option "auto_release" must be of type bool, array given
TypeError: RedisLock::__construct(): Argument #4 ($options) option "auto_release" must be of type bool, null given

--TEST--
withLock(): an exception thrown by the callback reaches the caller unchanged and the key is released
--EXTENSIONS--
redislock
--SKIPIF--
<?php require __DIR__ . '/../skipif.inc'; ?>
--FILE--
<?php
require __DIR__ . '/../config.inc';
$url = redislock_test_url();
$key = redislock_test_key('withlock-throw');
$lock = redislock_test_lock($key, 10);

class MyException extends DomainException {}

$prev = new LogicException('cause');
$line = 0;
try {
    $lock->withLock(function (RedisLock $l) use ($prev, &$line, $url, $key) {
        var_dump(redis_cmd($url, 'GET', redislock_test_stored_key($key)) === $l->token());
        $line = __LINE__ + 1;
        throw new MyException('boom', 42, $prev);
    });
    echo "not reached\n";
} catch (Throwable $e) {
    var_dump(get_class($e));
    var_dump($e->getMessage());
    var_dump($e->getCode());
    var_dump($e->getPrevious() === $prev);
    var_dump($e->getLine() === $line);
    var_dump($e->getFile() === __FILE__);
}
var_dump(redis_cmd($url, 'EXISTS', redislock_test_stored_key($key)));
var_dump($lock->token());

// The very same object, thrown from outside.
$ex = new RuntimeException('same');
try {
    $lock->withLock(function () use ($ex) { throw $ex; });
} catch (Throwable $e) {
    var_dump($e === $ex);
    var_dump($e->getPrevious());
}
var_dump(redis_cmd($url, 'EXISTS', redislock_test_stored_key($key)));

// Engine errors too.
try {
    $lock->withLock(function () { return intdiv(1, 0); });
} catch (Throwable $e) {
    var_dump(get_class($e), $e->getMessage());
}
var_dump(redis_cmd($url, 'EXISTS', redislock_test_stored_key($key)));

// The lock is usable again.
var_dump($lock->withLock(fn () => 'ok'));
?>
--EXPECT--
bool(true)
string(11) "MyException"
string(4) "boom"
int(42)
bool(true)
bool(true)
bool(true)
int(0)
NULL
bool(true)
NULL
int(0)
string(19) "DivisionByZeroError"
string(16) "Division by zero"
int(0)
string(2) "ok"

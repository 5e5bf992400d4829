--TEST--
Exception classes: constructible from PHP, caught as RuntimeException and LockException; thrown ones carry the caller's file, line and trace
--EXTENSIONS--
redislock
--FILE--
<?php
$classes = ['RedisLock\LockException', 'RedisLock\ConnectionException', 'RedisLock\TimeoutException', 'RedisLock\LockLostException'];
$prev = new LogicException('inner');
foreach ($classes as $class) {
    $e = new $class('msg', 42, $prev); $line = __LINE__;
    try {
        throw $e;
    } catch (RuntimeException $caught) {
        echo $class, ': ', var_export([
            $caught === $e,
            $caught instanceof RedisLock\LockException,
            $caught->getMessage(), $caught->getCode(), $caught->getPrevious() === $prev,
            $caught->getFile() === __FILE__, $caught->getLine() === $line,
        ], true) === var_export([true, true, 'msg', 42, true, true, true], true) ? "ok" : "wrong", "\n";
    }
    // Named arguments and defaults, like any exception.
    $d = new $class();
    var_dump($d->getMessage(), $d->getCode(), $d->getPrevious());
    $n = new $class(code: 7, message: 'named');
    echo $n->getMessage(), ' ', $n->getCode(), "\n";
}
// User classes may extend them.
class MyLost extends RedisLock\LockLostException {}
try {
    throw new MyLost('mine');
} catch (RedisLock\LockException $e) {
    echo get_class($e), ' ', $e->getMessage(), "\n";
}

// A free port: acquire() fails with a ConnectionException thrown "at" the call.
$s = stream_socket_server('tcp://127.0.0.1:0');
$name = stream_socket_get_name($s, false);
fclose($s);
$lock = new RedisLock('exc', 5, 'redis://' . $name);
function take(RedisLock $lock): bool
{
    return $lock->acquire(); // the calling line
}
try {
    take($lock);
} catch (RedisLock\LockException $e) {
    echo get_class($e), "\n";
    var_dump($e->getFile() === __FILE__);
    $src = file(__FILE__);
    echo trim($src[$e->getLine() - 1]), "\n";
    $trace = $e->getTrace();
    echo $trace[0]['class'], $trace[0]['type'], $trace[0]['function'], "()\n";
    echo $trace[1]['function'], "()\n";
    var_dump($e->getCode(), $e->getPrevious());
}
// Errors raised before Redis (ValueError) point at the caller too.
try {
    $line = __LINE__; new RedisLock('', 5, 'redis://127.0.0.1:1');
} catch (ValueError $e) {
    var_dump($e->getLine() === $line, $e->getTrace()[0]['function']);
}
?>
--EXPECT--
RedisLock\LockException: ok
string(0) ""
int(0)
NULL
named 7
RedisLock\ConnectionException: ok
string(0) ""
int(0)
NULL
named 7
RedisLock\TimeoutException: ok
string(0) ""
int(0)
NULL
named 7
RedisLock\LockLostException: ok
string(0) ""
int(0)
NULL
named 7
MyLost mine
RedisLock\ConnectionException
bool(true)
return $lock->acquire(); // the calling line
RedisLock->acquire()
take()
int(0)
NULL
bool(true)
string(11) "__construct"

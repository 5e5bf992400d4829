--TEST--
The extension loads and declares RedisLock and the exception tree
--EXTENSIONS--
redislock
--FILE--
<?php
var_dump(extension_loaded('redislock'));
var_dump((new ReflectionClass('RedisLock'))->isFinal());
foreach (['LockException', 'ConnectionException', 'TimeoutException', 'LockLostException'] as $c) {
    $class = new ReflectionClass("RedisLock\\$c");
    echo $class->getName(), ' extends ', $class->getParentClass()->getName(), "\n";
}
echo phpversion('redislock') === '0.2.0' ? "version ok\n" : "version " . phpversion('redislock') . "\n";
?>
--EXPECT--
bool(true)
bool(true)
RedisLock\LockException extends RuntimeException
RedisLock\ConnectionException extends RedisLock\LockException
RedisLock\TimeoutException extends RedisLock\LockException
RedisLock\LockLostException extends RedisLock\LockException
version ok

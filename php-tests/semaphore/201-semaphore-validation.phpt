--TEST--
Semaphore: bad arguments are ValueErrors naming the argument, Redlock is refused with a LockException
--EXTENSIONS--
redislock
--SKIPIF--
<?php require __DIR__ . '/../skipif.inc'; ?>
--FILE--
<?php
require __DIR__ . '/../config.inc';
use RedisLock\Semaphore;
$url = 'redis://127.0.0.1:1';
$cases = [
    'empty name' => fn() => new Semaphore('', 2, 5, $url),
    'helper name' => fn() => new Semaphore('a~~b', 2, 5, $url),
    'no permits' => fn() => new Semaphore('a', 0, 5, $url),
    'negative permits' => fn() => new Semaphore('a', -3, 5, $url),
    'absurd permits' => fn() => new Semaphore('a', 1000001, 5, $url),
    'ttl 0' => fn() => new Semaphore('a', 2, 0, $url),
    'ttl NAN' => fn() => new Semaphore('a', 2, NAN, $url),
    'unknown option' => fn() => new Semaphore('a', 2, 5, $url, ['nope' => 1]),
    'on_lost interrupt' => fn() => new Semaphore('a', 2, 5, $url, ['auto_renew' => true, 'on_lost' => 'interrupt']),
    'fencing' => fn() => new Semaphore('a', 2, 5, $url, ['fencing' => true]),
    'redlock' => fn() => new Semaphore('a', 2, 5, [$url, 'redis://127.0.0.1:2', 'redis://127.0.0.1:3']),
    'negative wait' => fn() => (new Semaphore('a', 2, 5, $url))->acquire(-1),
    'bad refresh ttl' => fn() => (new Semaphore('a', 2, 5, $url))->refresh(-1),
    'not callable' => fn() => (new Semaphore('a', 2, 5, $url))->withPermit('no such function'),
    'password in options' => fn() => new Semaphore('a', 2, 5, $url, ['sentinel' => 'm', 'sentinel_password' => 'pw', 'cluster' => true]),
];
foreach ($cases as $what => $f) {
    echo "$what: ";
    show_outcome($f);
}
$m = new ReflectionMethod(Semaphore::class, '__construct');
foreach ($m->getParameters() as $p) {
    echo $p->getName(), ' ', $p->getType(), $p->getAttributes() ? ' #[' . $p->getAttributes()[0]->getName() . ']' : '', "\n";
}
?>
--EXPECTF--
empty name: ValueError: RedisLock\Semaphore::__construct(): Argument #1 ($name) must not be empty
helper name: ValueError: RedisLock\Semaphore::__construct(): Argument #1 ($name) must not contain "~~": redislock's helper keys use it
no permits: ValueError: RedisLock\Semaphore::__construct(): Argument #2 ($permits) must be between 1 and 1000000
negative permits: ValueError: RedisLock\Semaphore::__construct(): Argument #2 ($permits) must be between 1 and 1000000
absurd permits: ValueError: RedisLock\Semaphore::__construct(): Argument #2 ($permits) must be between 1 and 1000000
ttl 0: ValueError: RedisLock\Semaphore::__construct(): Argument #3 ($ttl) %s
ttl NAN: ValueError: RedisLock\Semaphore::__construct(): Argument #3 ($ttl) %s
unknown option: ValueError: RedisLock\Semaphore::__construct(): Argument #5 ($options) contains unknown option "nope" (known: %s)
on_lost interrupt: ValueError: RedisLock\Semaphore::__construct(): Argument #5 ($options) option "on_lost" is not supported by RedisLock\Semaphore: "interrupt" is for locks only; withPermit() throws LockLostException after its callback when the permit was lost
fencing: ValueError: RedisLock\Semaphore::__construct(): Argument #5 ($options) option "fencing" is not supported by RedisLock\Semaphore: semaphores give no fencing tokens
redlock: RedisLock\LockException: RedisLock\Semaphore does not run over several independent servers (Redlock): counting holders needs one server that decides, and there is no quorum implementation for semaphores yet; use one server, Sentinel or Cluster
negative wait: ValueError: RedisLock\Semaphore::acquire(): Argument #1 ($wait) %s
bad refresh ttl: ValueError: RedisLock\Semaphore::refresh(): Argument #1 ($ttl) %s
not callable: TypeError: RedisLock\Semaphore::withPermit(): Argument #1 ($callback) must be a valid callback, %s given
password in options: ValueError: %s
name string
permits int
ttl ?float
servers array|string|null #[SensitiveParameter]
options array #[SensitiveParameter]

--TEST--
Semaphore: acquire($wait, $count) and withPermit($callback, $wait, $count) take several permits at once, first come first served (a waiter asking more than is free holds the newcomers behind it), release() gives them all back; $count and $permits convert as PHP's int parameters do
--EXTENSIONS--
redislock
--SKIPIF--
<?php require __DIR__ . '/../skipif.inc'; ?>
--FILE--
<?php
require __DIR__ . '/../config.inc';
require __DIR__ . '/../children.inc';
use RedisLock\Semaphore;
$url = redislock_test_url();
$name = redislock_test_key('weighted');
$holders = "$name~~s";
$held = fn () => redis_cmd($url, 'ZCOUNT', $holders, '(0', '+inf');

$a = new Semaphore($name, 3, 10, $url);
check('a takes 2 of 3', $a->acquire(0, 2) && $held() === 2);
// b waits for 2 in another process: only 1 is free.
$child = spawn_php(sprintf('
    $b = new RedisLock\Semaphore(%s, 3, 10, %s);
    echo $b->acquire(5, 2) ? "got 2" : "timed out", "\n";
    usleep(300000);
    echo $b->release() ? "gave 2 back" : "lost", "\n";',
    var_export($name, true), var_export($url, true)));
check('b queues', wait_until(fn () => redis_cmd($url, 'ZCARD', "$holders~~q") === 1));
$c = new Semaphore($name, 3, 10, $url);
check('a newcomer asking for the free permit does not pass b', $c->acquire(0, 1) === false && $held() === 2);
check('a gives both back', $a->release());
check('b got its 2', read_line($child) === 'got 2');
check('c takes the third', $c->acquire() && $held() === 3 && $c->release());
check('b gives both back', read_line($child) === 'gave 2 back');
[$code] = finish_php($child);
check('b done', $code === 0);
check('then c takes the 3', $c->acquire(0, 3) && $held() === 3);
check('and gives them all back', $c->release() && $held() === 0);

echo "-- withPermit with a count\n";
$seen = $c->withPermit(fn () => redis_cmd($url, 'ZCOUNT', $holders, '(0', '+inf'), 0, 2);
check('2 held inside, none after', $seen === 2 && $held() === 0);

echo "-- arguments\n";
foreach (['"2"' => '2', '2.0' => 2.0, 'true' => true] as $what => $count) {
    check("count $what", $c->acquire(0, $count) && $c->release());
}
foreach (['0' => 0, '4' => 4, '1.5' => 1.5, 'null' => null, '"x"' => 'x'] as $what => $count) {
    echo "count $what: ";
    show_outcome(fn () => $c->acquire(0, $count));
}
foreach (['"4"' => '4', '4.0' => 4.0, 'true' => true] as $what => $permits) {
    echo "permits $what: ";
    show_outcome(fn () => (new Semaphore("$name-p", $permits, 10, $url))->__debugInfo()['permits'], fn ($p) => "permits $p");
}
echo "permits 4.5: ";
show_outcome(fn () => new Semaphore($name, 4.5, 10, $url));
check('nothing held', $held() === 0);
?>
--EXPECTF--
a takes 2 of 3: ok
b queues: ok
a newcomer asking for the free permit does not pass b: ok
a gives both back: ok
b got its 2: ok
c takes the third: ok
b gives both back: ok
b done: ok
then c takes the 3: ok
and gives them all back: ok
-- withPermit with a count
2 held inside, none after: ok
-- arguments
count "2": ok
count 2.0: ok
count true: ok
count 0: ValueError: RedisLock\Semaphore::acquire(): Argument #2 ($count) must be between 1 and 3 (the semaphore's 3 permits, at most 1000 at once)
count 4: ValueError: RedisLock\Semaphore::acquire(): Argument #2 ($count) must be between 1 and 3 (the semaphore's 3 permits, at most 1000 at once)
count 1.5: TypeError: RedisLock\Semaphore::acquire(): Argument #2 ($count) must be of type int, float given
count null: TypeError: RedisLock\Semaphore::acquire(): Argument #2 ($count) must be of type int, null given
count "x": TypeError: RedisLock\Semaphore::acquire(): Argument #2 ($count) must be of type int, string given
permits "4": permits 4
permits 4.0: permits 4
permits true: permits 1
permits 4.5: TypeError: RedisLock\Semaphore::__construct(): Argument #2 ($permits) must be of type int, float given
nothing held: ok

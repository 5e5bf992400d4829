--TEST--
Semaphore auto_renew: a 0.3 s permit kept through a 1 s withPermit(); given back at release and request end; a permit taken away is found lost; a killed holder's permit comes back
--EXTENSIONS--
redislock
--SKIPIF--
<?php require __DIR__ . '/../skipif.inc'; if (getenv('REDISLOCK_TEST_TOPOLOGY') === 'redlock') die('skip semaphores refuse Redlock'); ?>
--FILE--
<?php
require __DIR__ . '/../config.inc';
require __DIR__ . '/../children.inc';
use RedisLock\Semaphore;
$url = redislock_test_url();
$servers = redislock_test_servers();
$renew = redislock_test_options(['auto_renew' => true]);
$sem = fn(string $name, float $ttl, array $options) => new Semaphore($name, 1, $ttl, $servers, $options);

// Kept well past its lease plus the clock grace (0.3 + 0.5 s).
$name = redislock_test_key('sem-renew');
$holder = $sem($name, 0.3, $renew);
$other = $sem($name, 5, redislock_test_options());
$lost = RedisLock::stats()['lost_leases'];
$seen = $holder->withPermit(function () use ($holder, $other) {
    $taken = false;
    for ($i = 0; $i < 10; $i++) {
        usleep(100000);
        $taken = $taken || $other->acquire();
    }
    return [$holder->isAcquired(), $holder->remainingTtl() > 0, $taken];
});
check('held through 1 s, nobody else got it', $seen === [true, true, false], json_encode($seen));
check('given back by withPermit()', $other->acquire() && $other->release());
check('no lease counted lost', RedisLock::stats()['lost_leases'] === $lost);

// A permit taken away behind the holder's back: the next renewal finds it.
$gone_name = redislock_test_key('sem-renew-lost');
$gone = $sem($gone_name, 0.6, $renew);
check('acquired', $gone->acquire());
redis_cmd($url, 'DEL', redislock_test_stored_key($gone_name) . '~~s');
usleep(450000);
check('found lost by the renewal', $gone->isAcquired() === false);
check('counted in lost_leases', RedisLock::stats()['lost_leases'] === $lost + 1);
check('release() says so', $gone->release() === false);

// Request end gives it back, renewal ends with the request.
$name = redislock_test_key('sem-renew-end');
$holders = redislock_test_stored_key($name) . '~~s';
$args = var_export([$name, $servers, $renew], true);
[$code, $out] = redislock_run_child("[\$n, \$s, \$o] = $args;\n"
    . "\$GLOBALS['keep'] = new RedisLock\\Semaphore(\$n, 1, 0.3, \$s, \$o);\n"
    . "var_dump(\$GLOBALS['keep']->acquire()); usleep(600000);");
check('request end gave it back', trim($out) === 'bool(true)' && $code === 0
    && redis_cmd($url, 'ZCOUNT', $holders, '(0', '+inf') === 0, "$code $out");

// A holder killed with SIGKILL stops renewing: its permit comes back
// after its lease and the clock grace.
$child = spawn_php(sprintf('
    $s = new RedisLock\Semaphore(%s, 1, 0.6, %s, %s);
    if (!$s->acquire()) { echo "acquire failed\n"; exit(1); }
    echo "held\n";
    sleep(30);',
    var_export($name, true), var_export($servers, true), var_export($renew, true)));
check('child holds the permit', read_line($child) === 'held');
usleep(900000);                                  // past the 0.6 s lease: only renewal keeps it
$waiter = $sem($name, 5, redislock_test_options());
check('renewed while the child lives', $waiter->acquire() === false);
proc_terminate($child[0], 9);
$t_kill = hrtime(true);
[$code] = finish_php($child);
check('child killed', $code === 'signal 9', (string) $code);
check('the permit comes back', $waiter->acquire(3.0));
$back = since($t_kill);
check('within lease + grace + margin', $back < 1.6, sprintf('%.3f s', $back));
check('released', $waiter->release());
?>
--EXPECT--
held through 1 s, nobody else got it: ok
given back by withPermit(): ok
no lease counted lost: ok
acquired: ok
found lost by the renewal: ok
counted in lost_leases: ok
release() says so: ok
request end gave it back: ok
child holds the permit: ok
renewed while the child lives: ok
child killed: ok
the permit comes back: ok
within lease + grace + margin: ok
released: ok

--TEST--
restricted servers with compare-and-delete (Valkey 9, REDISLOCK_TEST_SERVER): where scripts are refused (EVAL/EVALSHA renamed away, or an ACL user without @scripting) the lock works without Lua: acquire, isAcquired, remainingTtl, refresh, withLock, release, a blocked acquire woken by the release; fencing is refused with the reason
--EXTENSIONS--
redislock
--SKIPIF--
<?php
require __DIR__ . '/../skipif.inc';
redislock_skip_unless_single('it starts its own Valkey servers');
if ((string) getenv('REDISLOCK_TEST_SERVER') === '') {
    die('skip needs REDISLOCK_TEST_SERVER: no Valkey 9 to test on (e.g. REDISLOCK_TEST_SERVER="chroot /var/tmp/valkey-sid valkey-server", see docs/operations.md)');
}
?>
--FILE--
<?php
require __DIR__ . '/../config.inc';
require __DIR__ . '/../children.inc';

function exercise(string $label, string $url, string $admin): void
{
    $key = redislock_test_key("scriptless-$label");
    $lock = new RedisLock($key, 5, $url);
    check("$label acquire", $lock->acquire() === true);
    check("$label key holds the token", redis_cmd($admin, 'GET', $key) === $lock->token());
    check("$label isAcquired", $lock->isAcquired() === true);
    $ttl = $lock->remainingTtl();
    check("$label remainingTtl", $ttl > 4.0 && $ttl <= 5.0, var_export($ttl, true));
    check("$label refresh", $lock->refresh(20) === true && redis_cmd($admin, 'PTTL', $key) > 19000);
    check("$label release", $lock->release() === true && redis_cmd($admin, 'EXISTS', $key) === 0);
    check("$label isAcquired after release", $lock->isAcquired() === false);

    $ran = $lock->withLock(fn () => redis_cmd($admin, 'GET', $key) !== null ? 'ran' : 'not held');
    check("$label withLock", $ran === 'ran' && redis_cmd($admin, 'EXISTS', $key) === 0, var_export($ran, true));

    // A blocked acquire in another process, woken by the release (its
    // retry_delay of 3 s is far longer than the wake-up takes).
    check("$label holder", $lock->acquire() === true);
    $waiter = spawn_php(sprintf('
        $l = new RedisLock(%s, 5, %s, ["retry_delay" => 3.0]);
        echo "waiting\n";
        $t0 = hrtime(true);
        $got = $l->acquire(8.0);
        echo json_encode(["got" => $got]), "\n";
        $l->release();',
        var_export($key, true), var_export($url, true)));
    check("$label waiter started", read_line($waiter) === 'waiting');
    usleep(300000);
    $t0 = hrtime(true);
    $lock->release();
    $r = json_decode(read_line($waiter), true);
    $took = since($t0);
    check("$label waiter woken by the release", ($r['got'] ?? null) === true && $took < 1.5, json_encode($r) . " after $took s");
    finish_php($waiter);

    // Fencing needs a script.
    $fenced = new RedisLock($key . '-f', 5, $url, ['fencing' => true]);
    try {
        $fenced->acquire();
        echo "$label fencing: acquired\n";
    } catch (RedisLock\LockException $e) {
        check("$label fencing refused", str_contains($e->getMessage(), 'refuses Lua scripts') && redis_cmd($admin, 'EXISTS', $key . '-f') === 0, $e->getMessage());
    }
}

$renamed = TestRedis::startTestServer(['--rename-command', 'EVAL', '', '--rename-command', 'EVALSHA', '']);
exercise('renamed', $renamed->url(), $renamed->url());

$acl = TestRedis::startTestServer();
$admin = $acl->url();
redis_cmd($admin, 'ACL', 'SETUSER', 'noscript', 'on', '>pw', '~*', '&*', '+@all', '-@scripting');
exercise('acl', "redis://noscript:pw@127.0.0.1:{$acl->port}", $admin);
?>
--EXPECT--
renamed acquire: ok
renamed key holds the token: ok
renamed isAcquired: ok
renamed remainingTtl: ok
renamed refresh: ok
renamed release: ok
renamed isAcquired after release: ok
renamed withLock: ok
renamed holder: ok
renamed waiter started: ok
renamed waiter woken by the release: ok
renamed fencing refused: ok
acl acquire: ok
acl key holds the token: ok
acl isAcquired: ok
acl remainingTtl: ok
acl refresh: ok
acl release: ok
acl isAcquired after release: ok
acl withLock: ok
acl holder: ok
acl waiter started: ok
acl waiter woken by the release: ok
acl fencing refused: ok

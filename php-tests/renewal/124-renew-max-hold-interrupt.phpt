--TEST--
max_hold with on_lost => 'interrupt': a withLock() callback still running when the lease runs out after max_hold is interrupted
--EXTENSIONS--
redislock
--SKIPIF--
<?php require __DIR__ . '/../skipif.inc'; ?>
--FILE--
<?php
require __DIR__ . '/../config.inc';
require __DIR__ . '/../children.inc';
$url = redislock_test_url();
$key = redislock_test_key('max-hold-interrupt');

// Renewal stops after 1 s; the lease then ends within 0.5 s. From then on
// the callback runs unprotected: on_lost => 'interrupt' should stop it.
$lock = new RedisLock($key, 0.5, $url, ['auto_renew' => true, 'max_hold' => 1.0, 'on_lost' => 'interrupt']);
$t0 = hrtime(true);
$gone_at = null;
try {
    $lock->withLock(function () use ($t0, $url, $key, &$gone_at) {
        while (since($t0) < 3.0) {
            if ($gone_at === null && redis_cmd($url, 'EXISTS', $key) === 0) {
                $gone_at = since($t0);
            }
        }
        echo "callback ran to its end\n";
    });
    echo "no exception\n";
} catch (RedisLock\LockLostException $e) {
    $caught = since($t0);
    echo get_class($e), "\n";
}
// The interrupt comes when the extension's own knowledge says the lease is
// over: from the last renewal's send time plus the ttl, which is never later
// than Redis' expiry (it may be a few ms earlier).
check('interrupted when the unrenewed lease ran out (1.0 to 2.0 s)', isset($caught) && $caught > 1.0 && $caught < 2.0,
    var_export($caught ?? null, true));
check('not long before Redis saw it go', isset($caught) && wait_until(fn () => redis_cmd($url, 'EXISTS', $key) === 0, 0.5),
    sprintf('caught at %s s, lease gone at %s s', var_export($caught ?? null, true), var_export($gone_at, true)));
var_dump($lock->token(), redis_cmd($url, 'EXISTS', $key));
?>
--EXPECT--
RedisLock\LockLostException
interrupted when the unrenewed lease ran out (1.0 to 2.0 s): ok
not long before Redis saw it go: ok
NULL
int(0)

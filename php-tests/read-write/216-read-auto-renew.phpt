--TEST--
Read holds: auto_renew keeps a 0.3 s read lease across a 1.2 s sleep (writers stay out); without it the lease ends
--EXTENSIONS--
redislock
--SKIPIF--
<?php require __DIR__ . '/../skipif.inc'; ?>
--FILE--
<?php
require __DIR__ . '/../config.inc';
require __DIR__ . '/../children.inc';
$url = redislock_test_url();
$key = redislock_test_key('read-renew');
$writer = new RedisLock($key, 10, $url);
$lost = RedisLock::stats()['lost_leases'];

$renewed = new RedisLock($key, 0.3, $url, ['auto_renew' => true]);
check('reads', $renewed->acquireRead());
usleep(1200000);   // four leases, past the lease and the 0.5 s clock grace
check('still reads', $renewed->isAcquired());
$left = $renewed->remainingTtl();
check('with a lease left', is_float($left) && $left > 0 && $left <= 0.3, var_export($left, true));
check('the lock is still the readers\'', redis_read_held($url, $key));
check('a writer stays out', $writer->acquire() === false);
check('released', $renewed->release());
check('no lease counted lost', RedisLock::stats()['lost_leases'] === $lost);
check('the writer gets in', $writer->acquire() && $writer->release());

$plain = new RedisLock($key, 0.3, $url);
check('reads without auto_renew', $plain->acquireRead());
usleep(1200000);
check('the lease ended', $plain->isAcquired() === false);
check('a writer gets in', $writer->acquire());
check('the late release is no release', $plain->release() === false);
check('released', $writer->release());
?>
--EXPECT--
reads: ok
still reads: ok
with a lease left: ok
the lock is still the readers': ok
a writer stays out: ok
released: ok
no lease counted lost: ok
the writer gets in: ok
reads without auto_renew: ok
the lease ended: ok
a writer gets in: ok
the late release is no release: ok
released: ok

--TEST--
isLocked(): true while anyone holds the key (this object, another object, another process), false when free; sends no write
--EXTENSIONS--
redislock
--SKIPIF--
<?php require __DIR__ . '/../skipif.inc'; ?>
--FILE--
<?php
require __DIR__ . '/../config.inc';
require __DIR__ . '/../children.inc';
$url = redislock_test_url();
$key = redislock_test_key('is-locked');
$l = redislock_test_lock($key, 10);
check('free', !$l->isLocked());
check('held by us', $l->acquire() && $l->isLocked());
$other = redislock_test_lock($key, 10);
check('seen by another object', $other->isLocked() && !$other->isAcquired());
$l->release();
redis_cmd($url, 'SET', redislock_test_stored_key($key), 'someone-else', 'PX', '10000');
check('held elsewhere', $l->isLocked() && !$l->isAcquired());
redis_cmd($url, 'DEL', redislock_test_stored_key($key));
check('free again', !$l->isLocked());
?>
--EXPECT--
free: ok
held by us: ok
seen by another object: ok
held elsewhere: ok
free again: ok

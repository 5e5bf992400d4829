--TEST--
RedisLock::stats(): the counters (acquires, contended, timeouts, releases, renewals, lost leases, reconnects, wait percentiles) and the phpinfo() table
--EXTENSIONS--
redislock
--SKIPIF--
<?php require __DIR__ . '/../skipif.inc'; redislock_skip_unless_single('restarts and counts on one server of its own'); ?>
--FILE--
<?php
require __DIR__ . '/../config.inc';
require __DIR__ . '/../children.inc';
$server = TestRedis::start();
$url = $server->url();
$s0 = RedisLock::stats();
echo implode(',', array_keys($s0)), "\n";
check('every counter is an int', count(array_filter($s0, 'is_int')) === 16);
$delta = function (string $name) use (&$s0): int { return RedisLock::stats()[$name] - $s0[$name]; };

$key = redislock_test_key('stats');
$a = new RedisLock($key, 10, $url);
$b = new RedisLock($key, 10, $url, ['reentrant' => false]);
$a->acquire();                 // acquired
$b->acquire();                 // contended
$b->acquire(0.05);             // contended + timeout
$a->acquire();                 // reentrant: acquired
$a->release();
$a->release();                 // released in Redis
check('acquires', $delta('acquires') === 4, $delta('acquires'));
check('acquired', $delta('acquired') === 2, $delta('acquired'));
check('contended', $delta('contended') === 2, $delta('contended'));
check('timeouts', $delta('timeouts') === 1, $delta('timeouts'));
check('releases', $delta('releases') === 1, $delta('releases'));
$s = RedisLock::stats();
check('wait percentiles are ordered', $s['wait_p50_us'] > 0 && $s['wait_p50_us'] <= $s['wait_p99_us'] && $s['wait_p99_us'] <= $s['wait_max_us']);

$r = new RedisLock(redislock_test_key('stats-renew'), 0.3, $url, ['auto_renew' => true]);
$r->acquire();
usleep(700000);
check('renewals', $delta('renewals') >= 2, $delta('renewals'));
redis_cmd($url, 'DEL', $r->key());
wait_until(fn () => RedisLock::stats()['lost_leases'] > $s0['lost_leases'], 3.0);
check('lost leases', $delta('lost_leases') === 1, $delta('lost_leases'));
// Lost before any renewal, or without auto_renew: counted once each too.
$early = new RedisLock(redislock_test_key('stats-early'), 5, $url, ['auto_renew' => true]);
$early->acquire();
redis_cmd($url, 'DEL', $early->key());
$plain = new RedisLock(redislock_test_key('stats-plain'), 5, $url);
$plain->acquire();
redis_cmd($url, 'SET', $plain->key(), 'someone-else');
check('a lost plain lease is found and counted once', !$plain->isAcquired() && !$plain->release()
    && $delta('lost_leases') === 2, $delta('lost_leases'));
check('a lease lost before its first renewal is counted', !$early->refresh() && $delta('lost_leases') === 3,
    $delta('lost_leases'));
redis_cmd($url, 'DEL', $plain->key());

$c = new RedisLock(redislock_test_key('stats-reconnect'), 10, $url);
$c->acquire();
$c->release();
$server->restart();
$c->acquire();                 // the pooled connection is dead: replaced
$c->release();
check('reconnects', $delta('reconnects') >= 1, $delta('reconnects'));

ob_start();
phpinfo(INFO_MODULES);
$info = ob_get_clean();
check('phpinfo shows the statistics', str_contains($info, 'Statistics (this process)') && preg_match('/acquires => \d+/', $info) === 1);
?>
--EXPECT--
acquires,acquired,contended,timeouts,busy,errors,releases,lost_leases,renewals,handovers,wait_p50_us,wait_p99_us,wait_max_us,wait_sum_us,reconnects,scope,enabled,primitives,names,names_untracked,unsafe_servers
every counter is an int: ok
acquires: ok
acquired: ok
contended: ok
timeouts: ok
releases: ok
wait percentiles are ordered: ok
renewals: ok
lost leases: ok
a lost plain lease is found and counted once: ok
a lease lost before its first renewal is counted: ok
reconnects: ok
phpinfo shows the statistics: ok

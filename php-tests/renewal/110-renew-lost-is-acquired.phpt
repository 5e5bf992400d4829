--TEST--
auto_renew: a lease deleted behind the holder's back is reported lost by isAcquired() soon, without a GET per call
--EXTENSIONS--
redislock
--SKIPIF--
<?php require __DIR__ . '/../skipif.inc'; ?>
--FILE--
<?php
require __DIR__ . '/../config.inc';
require __DIR__ . '/../children.inc';
// A private server, so that only this test's commands are counted.
$server = TestRedis::start();
$url = $server->url();
$key = redislock_test_key('renew-lost');

// GETs sent by clients: the refresh script runs one GET inside each EVALSHA.
function plain_gets(string $url): int
{
    $info = redis_cmd($url, 'INFO', 'commandstats');
    $calls = fn ($c) => preg_match('/^cmdstat_' . $c . ':calls=(\d+)/m', $info, $m) ? (int) $m[1] : 0;
    return $calls('get') - $calls('evalsha');
}

$lock = new RedisLock($key, 0.6, $url, ['auto_renew' => true]);
var_dump($lock->acquire());
var_dump($lock->refresh());                      // loads the refresh script: no NOSCRIPT later
$gets = plain_gets($url);
$answers = [];
for ($i = 0; $i < 50; $i++) {                    // ~0.5 s, past the ttl: renewal keeps it
    $answers[] = $lock->isAcquired();
    usleep(10000);
}
check('held throughout', !in_array(false, $answers, true));
check('no GET while held', plain_gets($url) === $gets, sprintf('%d GETs', plain_gets($url) - $gets));
check('the key holds our token', redis_cmd($url, 'GET', $key) === $lock->token());

redis_cmd($url, 'DEL', $key);
$gets = plain_gets($url);
$t0 = hrtime(true);
$calls = 0;
$lost = wait_until(function () use ($lock, &$calls) {
    $calls++;
    return !$lock->isAcquired();
}, 2.0);
$after = since($t0);
check('reported lost', $lost);
check('within 0.45 s', $after < 0.45, sprintf('%.3f s', $after));
check('and stays lost', !$lock->isAcquired() && !$lock->isAcquired());
check('no GET once lost', plain_gets($url) === $gets, sprintf('%d GETs for %d calls', plain_gets($url) - $gets, $calls + 2));
check('many calls were made', $calls > 5, "$calls");
var_dump($lock->release());
var_dump(redis_cmd($url, 'EXISTS', $key));
?>
--EXPECT--
bool(true)
bool(true)
held throughout: ok
no GET while held: ok
the key holds our token: ok
reported lost: ok
within 0.45 s: ok
and stays lost: ok
no GET once lost: ok
many calls were made: ok
bool(false)
int(0)

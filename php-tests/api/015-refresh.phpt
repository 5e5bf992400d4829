--TEST--
refresh() extends our lease (refresh(null) to the lock's ttl) and returns false when it is not ours
--EXTENSIONS--
redislock
--SKIPIF--
<?php require __DIR__ . '/../skipif.inc'; ?>
--FILE--
<?php
require __DIR__ . '/../config.inc';
$url = redislock_test_url();
$key = redislock_test_key('refresh');

function pttl_between(string $url, string $key, int $lo, int $hi): bool
{
    $p = redis_cmd($url, 'PTTL', redislock_test_stored_key($key));
    if ($p > $lo && $p <= $hi) {
        return true;
    }
    echo "PTTL $p not in ($lo, $hi]\n";
    return false;
}

$lock = redislock_test_lock($key, 2);
var_dump($lock->refresh());                      // never acquired
var_dump(redis_cmd($url, 'EXISTS', redislock_test_stored_key($key)));
var_dump($lock->acquire());
$token = $lock->token();
var_dump(pttl_between($url, $key, 1500, 2000));
var_dump($lock->refresh(10));
var_dump(pttl_between($url, $key, 9500, 10000));
var_dump($lock->refresh(5.5));
var_dump(pttl_between($url, $key, 5000, 5500));
var_dump($lock->refresh(null));                  // back to the lock's 2 s
var_dump(pttl_between($url, $key, 1500, 2000));
var_dump($lock->refresh(10));
var_dump($lock->refresh());
var_dump(pttl_between($url, $key, 1500, 2000));
var_dump(redis_cmd($url, 'GET', redislock_test_stored_key($key)) === $token);
var_dump($lock->token() === $token);

// Someone else owns the key now: false, their value and lease unchanged.
redis_cmd($url, 'SET', redislock_test_stored_key($key), 'other', 'PX', '10000');
var_dump($lock->refresh(30));
var_dump(redis_cmd($url, 'GET', redislock_test_stored_key($key)));
var_dump(pttl_between($url, $key, 9000, 10000));

// The key is gone: false, and refresh does not recreate it.
redis_cmd($url, 'DEL', redislock_test_stored_key($key));
var_dump($lock->refresh(30));
var_dump(redis_cmd($url, 'EXISTS', redislock_test_stored_key($key)));
?>
--EXPECT--
bool(false)
int(0)
bool(true)
bool(true)
bool(true)
bool(true)
bool(true)
bool(true)
bool(true)
bool(true)
bool(true)
bool(true)
bool(true)
bool(true)
bool(true)
bool(false)
string(5) "other"
bool(true)
bool(false)
int(0)

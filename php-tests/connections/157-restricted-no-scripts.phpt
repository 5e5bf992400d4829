--TEST--
restricted servers: where scripts are refused (EVAL/EVALSHA renamed away, or an ACL user without @scripting) no lock is ever taken, the error names the refused command, withLock never runs its callback, and no message carries a token
--EXTENSIONS--
redislock
--SKIPIF--
<?php require __DIR__ . '/../skipif.inc';
// A server that compares and deletes without scripts (Valkey 9+:
// DELIFEQ, Redis 8.4+: DELEX) runs the lock without them:
// 164-restricted-scriptless-valkey.phpt is that case.
require __DIR__ . '/../config.inc';
if (array_filter((array) redis_cmd(redislock_test_url(), 'COMMAND', 'INFO', 'DELIFEQ', 'DELEX'))) {
    die('skip not for this server: it deletes without scripts (DELIFEQ or DELEX), as 164 tests');
} ?>
--FILE--
<?php
require __DIR__ . '/../config.inc';

function attempt(string $label, RedisLock $lock, string $admin): void
{
    $key = $lock->key();
    foreach (['acquire' => fn () => $lock->acquire(), 'acquire(wait)' => fn () => $lock->acquire(0.5)] as $how => $call) {
        try {
            $got = $call();
            echo "$label $how: returned ", var_export($got, true), "\n";
        } catch (RedisLock\LockException $e) {
            $m = $e->getMessage();
            echo "$label $how: ", get_class($e), ' naming ', preg_match('/refuses (EVALSHA|EVAL|SCRIPT)\b/', $m, $x) ? $x[1] : "nothing ($m)",
                str_contains($m, 'needs EVAL/EVALSHA') ? ', says what redislock needs' : '', "\n";
        }
        echo "$label $how: key ", redis_cmd($admin, 'EXISTS', $key) === 0 ? 'not taken' : 'TAKEN', "\n";
    }
    $ran = false;
    try {
        $lock->withLock(function () use (&$ran) { $ran = true; });
    } catch (RedisLock\LockException $e) {
        echo "$label withLock: ", get_class($e), "\n";
    }
    echo "$label withLock: callback ", $ran ? 'RAN' : 'never ran', "\n";
}

// Scripts renamed away.
$renamed = TestRedis::start(['--rename-command', 'EVAL', '', '--rename-command', 'EVALSHA', '']);
attempt('renamed', new RedisLock('k-renamed', 30, $renamed->url()), $renamed->url());

// An ACL user without scripting.
$acl = TestRedis::start();
$admin = $acl->url();
redis_cmd($admin, 'ACL', 'SETUSER', 'noscript', 'on', '>pw', '~*', '&*', '+@all', '-@scripting');
$lock = new RedisLock('k-acl', 30, "redis://noscript:pw@127.0.0.1:{$acl->port}");
attempt('acl', $lock, $admin);

// No message carries an owner token: an acquire that failed has none, so
// check the server's echo of arguments is cut from a refused release too.
$ok = new RedisLock('k-token', 30, $admin);
var_dump($ok->acquire());
$token = $ok->token();
redis_cmd($admin, 'ACL', 'SETUSER', 'default', '-evalsha');
try {
    $ok->release();
    echo "release: returned\n";
} catch (RedisLock\LockException $e) {
    echo "release: ", get_class($e), str_contains($e->getMessage(), $token) ? ' WITH THE TOKEN' : ' without the token', "\n";
}
?>
--EXPECT--
renamed acquire: RedisLock\LockException naming EVALSHA, says what redislock needs
renamed acquire: key not taken
renamed acquire(wait): RedisLock\LockException naming EVALSHA, says what redislock needs
renamed acquire(wait): key not taken
renamed withLock: RedisLock\LockException
renamed withLock: callback never ran
acl acquire: RedisLock\LockException naming EVALSHA, says what redislock needs
acl acquire: key not taken
acl acquire(wait): RedisLock\LockException naming EVALSHA, says what redislock needs
acl acquire(wait): key not taken
acl withLock: RedisLock\LockException
acl withLock: callback never ran
bool(true)
release: RedisLock\LockException without the token

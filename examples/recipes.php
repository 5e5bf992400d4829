<?php
/*
 * The lock recipes PHP teams copy from blogs, each raced against a real
 * Redis, next to redislock in the same scenario.
 *
 *   php -n -d extension=target/release/redislock.so examples/recipes.php [-v] [redis://127.0.0.1:6379]
 *   bash scripts/recipes.sh [-v]      (builds if needed, starts a private redis-server)
 *
 * Every race is forced, not waited for by luck: a holder is forked and killed
 * with SIGKILL at the crash point, or the interleaving is run step by step
 * with one connection per client. -v prints every Redis command of the recipes.
 *
 * 1. INCR lock: a crash between INCR and EXPIRE leaves the lock held forever.
 * 2. SETNX + EXPIRE: the same crash leaves a lock with no TTL.
 * 3. SETNX + GETSET timestamps: two waiters both "win" the expired lock.
 * 4. SET NX EX + plain DEL: a late DEL frees someone else's lock: two holders.
 *
 * Exit status 0 when every race was reproduced and redislock held in every
 * scenario, 1 otherwise. Talks to Redis with the tiny RESP client below: no
 * phpredis needed (pcntl is needed for the forks).
 */

if (!extension_loaded('redislock') || !function_exists('pcntl_fork')) {
    fwrite(STDERR, "needs the redislock extension and pcntl: php -n -d extension=/path/to/redislock.so examples/recipes.php\n");
    exit(2);
}

$args = array_slice($argv, 1);
$trace = in_array('-v', $args, true);
$args = array_values(array_diff($args, ['-v']));
$url = $args[0] ?? (getenv('REDISLOCK_SERVER') ?: 'redis://127.0.0.1:6379');
$prefix = 'recipes:' . getmypid() . ':';

/** A minimal RESP client: one connection, one command at a time. */
final class Resp
{
    /** @var resource */
    private $sock;

    public function __construct(string $url, public string $name, private bool $quiet = false)
    {
        $p = parse_url($url);
        $this->sock = @stream_socket_client('tcp://' . ($p['host'] ?? '127.0.0.1') . ':' . ($p['port'] ?? 6379), $errno, $errstr, 2);
        if (!$this->sock) {
            throw new RuntimeException("cannot connect to $url: $errstr");
        }
        stream_set_timeout($this->sock, 5);
        if (isset($p['pass'])) {
            $this->send(...(isset($p['user']) && $p['user'] !== ''
                ? ['AUTH', urldecode($p['user']), urldecode($p['pass'])] : ['AUTH', urldecode($p['pass'])]));
        }
        if (($db = trim($p['path'] ?? '', '/')) !== '' && $db !== '0') {
            $this->send('SELECT', $db);
        }
    }

    /** Sends one command, prints it with -v, and returns the reply. */
    public function cmd(string ...$args): mixed
    {
        global $trace, $prefix;
        $reply = $this->send(...$args);
        if ($trace && !$this->quiet) {
            $show = static fn ($v) => $v === null ? '(nil)' : (is_int($v) ? "(integer) $v" : var_export($v, true));
            printf("        %-7s %s -> %s\n", $this->name . '>', str_replace($prefix, '', implode(' ', $args)), $show($reply));
        }
        return $reply;
    }

    private function send(string ...$args): mixed
    {
        $out = '*' . count($args) . "\r\n";
        foreach ($args as $a) {
            $out .= '$' . strlen($a) . "\r\n$a\r\n";
        }
        fwrite($this->sock, $out);
        return $this->read();
    }

    private function read(): mixed
    {
        $line = fgets($this->sock);
        if ($line === false) {
            throw new RuntimeException('Redis closed the connection');
        }
        $body = substr($line, 1, -2);
        switch ($line[0]) {
            case '+': return $body;
            case '-': throw new RuntimeException("Redis: $body");
            case ':': return (int) $body;
            case '$':
                if ((int) $body < 0) {
                    return null;
                }
                $data = '';
                while (strlen($data) < (int) $body + 2) {
                    $data .= fread($this->sock, (int) $body + 2 - strlen($data));
                }
                return substr($data, 0, -2);
            case '*':
                $items = [];
                for ($i = 0; $i < (int) $body; $i++) {
                    $items[] = $this->read();
                }
                return $items;
        }
        throw new RuntimeException("unexpected reply: $line");
    }
}

/**
 * Forks a holder that runs $before, reports its result, and would then run
 * $after, but is killed with SIGKILL at that point (no shutdown, no
 * destructors: a crash, an OOM kill, a deploy). Returns what $before returned.
 */
function crash_between(Closure $before, Closure $after): string
{
    [$parent, $child] = stream_socket_pair(STREAM_PF_UNIX, STREAM_SOCK_STREAM, STREAM_IPPROTO_IP);
    $pid = pcntl_fork();
    if ($pid === 0) {
        fclose($parent);
        fwrite($child, $before() . "\n");
        fgets($child);            // waits for a go that never comes
        $after();
        exit(0);
    }
    fclose($child);
    stream_set_timeout($parent, 10);
    $reported = rtrim((string) fgets($parent), "\n");
    function_exists('posix_kill') ? posix_kill($pid, SIGKILL) : exec("kill -9 $pid");
    pcntl_waitpid($pid, $status);
    fclose($parent);
    if (!pcntl_wifsignaled($status) || pcntl_wtermsig($status) !== SIGKILL) {
        throw new RuntimeException('the holder was not killed with SIGKILL');
    }
    return $reported;
}

/** Runs $work in a forked process; the returned function waits for it and returns $work's string. */
function in_child(Closure $work): Closure
{
    [$parent, $child] = stream_socket_pair(STREAM_PF_UNIX, STREAM_SOCK_STREAM, STREAM_IPPROTO_IP);
    $pid = pcntl_fork();
    if ($pid === 0) {
        fclose($parent);
        fwrite($child, (string) $work());
        fclose($child);
        exit(0);
    }
    fclose($child);
    return function () use ($parent, $pid): string {
        stream_set_timeout($parent, 10);
        $out = (string) stream_get_contents($parent);
        fclose($parent);
        pcntl_waitpid($pid, $status);
        return $out;
    };
}

function line(string $who, string $text, bool $ok, string $okWord, string $badWord): void
{
    printf("   %-10s %s [%s]\n", $who, $text, $ok ? $okWord : $badWord);
}

function elapsed(float $since): string
{
    return sprintf('%.2f s', microtime(true) - $since);
}

$results = [];   // name => [race reproduced, redislock held]
$scenarios = [];

/**
 * Recipes 1 and 2: a holder runs `$command key [arg]` (INCR or SETNX) and
 * also takes a redislock lock with a 1 s ttl, then is killed -9 just before
 * its `EXPIRE key 1`. Returns what the recipe's key and the redislock lock
 * looked like afterwards: the first reply, the key's TTL and the reply of
 * the same command once the EXPIRE would have run out (and when, after the
 * kill); the lock's PTTL after the kill, whether a waiter's acquire(3.0)
 * got it and when, and the function that prints redislock's verdict.
 */
function killed_before_expire(string $url, string $key, string $lockKey, string ...$command): array
{
    $took = crash_between(function () use ($url, $key, $lockKey, $command) {
        $r = new Resp($url, 'holder');
        $n = $r->cmd($command[0], $key, ...array_slice($command, 1));
        $lock = new RedisLock($lockKey, 1.0, $url);
        $GLOBALS['held'] = $lock;      // kept: a destroyed lock object releases
        return $n . ' ' . var_export($lock->acquire(), true);
    }, function () use ($url, $key) {
        (new Resp($url, 'holder'))->cmd('EXPIRE', $key, '1');   // never runs
    });
    $killedAt = microtime(true);
    [$first, $rlTook] = explode(' ', $took);
    $r = new Resp($url, 'waiter');
    $pttl = $r->cmd('PTTL', $lockKey);

    $lock = new RedisLock($lockKey, 1.0, $url);
    $got = $lock->acquire(3.0);
    $waited = microtime(true) - $killedAt;
    $lock->release();

    // Look at the recipe's key once the EXPIRE 1 the holder meant to set
    // would have run out: 1.05 s after the kill (the lock's own lease began
    // before the kill, so its wait can end a little under 1 s after it).
    $left = 1.05 - (microtime(true) - $killedAt);
    if ($left > 0) {
        usleep((int) ($left * 1e6));
    }
    $looked = microtime(true) - $killedAt;
    $ttl = $r->cmd('TTL', $key);
    $next = $r->cmd($command[0], $key, ...array_slice($command, 1));
    (new Resp($url, 'cleanup', true))->cmd('DEL', $key);
    $held = $rlTook === 'true' && $pttl > 0 && $pttl <= 1000 && $got
        && $waited >= $pttl / 1000 - 0.05 && $waited < 1.0 + 0.7;
    $verdict = fn () => line('redislock:', sprintf('SET NX PX sets the ttl in the same command: PTTL %d ms after the kill; acquire(3.0) got the lock when it expired, %.2f s after the kill',
        $pttl, $waited), $held, 'held', 'FAILED');
    return [$first, $ttl, $next, $killedAt, $looked, $held, $verdict];
}

/* ---------------------------------------------------------------------- */
$scenarios['INCR lock'] = function () use ($url, $prefix): array {
    echo "1) INCR lock: INCR key == 1 means acquired, then EXPIRE key 1, DEL to release\n";
    [$first, $ttl, $next, $killedAt, $looked, $held, $verdict] =
        killed_before_expire($url, $prefix . 'incr', $prefix . 'incr-redislock', 'INCR');
    $race = $first === '1' && $ttl === -1 && $next > 1 && $looked >= 1.0;
    line('recipe:', sprintf('holder INCR -> %s, killed -9 before its EXPIRE: TTL %d; %s later INCR -> %d: held forever, the counter never returns to 1',
        $first, $ttl, elapsed($killedAt), $next), $race, 'race reproduced', 'race NOT reproduced');
    $verdict();
    return [$race, $held];
};

/* ---------------------------------------------------------------------- */
$scenarios['SETNX + EXPIRE'] = function () use ($url, $prefix): array {
    echo "2) SETNX + EXPIRE: SETNX key 1, then EXPIRE key 1\n";
    [$first, $ttl, $again, $killedAt, $looked, $held, $verdict] =
        killed_before_expire($url, $prefix . 'setnx', $prefix . 'setnx-redislock', 'SETNX', '1');
    $race = $first === '1' && $ttl === -1 && $again === 0 && $looked >= 1.0;
    line('recipe:', sprintf('holder SETNX -> %s, killed -9 before its EXPIRE: TTL %d; %s later SETNX -> %d: the lock is held forever',
        $first, $ttl, elapsed($killedAt), $again), $race, 'race reproduced', 'race NOT reproduced');
    $verdict();
    return [$race, $held];
};

/* ---------------------------------------------------------------------- */
$scenarios['SETNX + GETSET timestamps'] = function () use ($url, $prefix): array {
    echo "3) SETNX + GETSET timestamps (old SETNX docs): value = expiry time; a waiter that sees it expired GETSETs a new one\n";
    $key = $prefix . 'getset';
    $lockKey = $prefix . 'getset-redislock';
    $timeout = 0.5;
    // The holder takes both locks with a 0.5 s lease and is killed.
    $took = crash_between(function () use ($url, $key, $lockKey, $timeout) {
        $r = new Resp($url, 'holder');
        $n = $r->cmd('SETNX', $key, sprintf('%.3f', microtime(true) + $timeout));
        $lock = new RedisLock($lockKey, $timeout, $url);
        $GLOBALS['held'] = $lock;      // kept: a destroyed lock object releases
        return $n . ' ' . var_export($lock->acquire(), true);
    }, function () {
    });
    $killedAt = microtime(true);
    [$first, $rlTook] = explode(' ', $took);

    // redislock: two waiters queue on the dead holder's lock at once.
    $waiters = [];
    foreach (['W1', 'W2'] as $name) {
        $waiters[$name] = in_child(function () use ($url, $lockKey, $timeout, $killedAt) {
            $r = new Resp($url, 'check', true);
            $lock = new RedisLock($lockKey, 2.0, $url);
            if (!$lock->acquire(3.0)) {
                return 'false';
            }
            $from = microtime(true) - $killedAt;
            $mine = $r->cmd('GET', $lockKey) === $lock->token();
            usleep(200000);                                       // the work
            $mine = $mine && $r->cmd('GET', $lockKey) === $lock->token();
            $to = microtime(true) - $killedAt;
            $released = $lock->release();
            return sprintf('%.3f %.3f %s', $from, $to, var_export($mine && $released, true));
        });
    }

    // The recipe, step by step with two clients. W2's clock runs 1 s ahead
    // of W1's (two app servers, one NTP hiccup): the recipe trusts clocks.
    $w1 = new Resp($url, 'W1');
    $w2 = new Resp($url, 'W2');
    $clock = ['W1' => fn () => microtime(true), 'W2' => fn () => microtime(true) + 1.0];
    usleep((int) (($timeout + 0.05) * 1e6));                   // the dead holder's time is up
    $setnx1 = $w1->cmd('SETNX', $key, sprintf('%.3f', $clock['W1']() + $timeout));
    $setnx2 = $w2->cmd('SETNX', $key, sprintf('%.3f', $clock['W2']() + $timeout));
    $seen1 = (float) $w1->cmd('GET', $key);
    $seen2 = (float) $w2->cmd('GET', $key);
    $bothSawExpired = $seen1 < $clock['W1']() && $seen2 < $clock['W2']();
    $mine1 = sprintf('%.3f', $clock['W1']() + $timeout);
    $old1 = (float) $w1->cmd('GETSET', $key, $mine1);
    $wins1 = $old1 < $clock['W1']();                           // "still expired: acquired"
    $mine2 = sprintf('%.3f', $clock['W2']() + $timeout);
    $old2 = (float) $w2->cmd('GETSET', $key, $mine2);
    $wins2 = $old2 < $clock['W2']();
    $now = $w1->cmd('GET', $key);
    $race = $first === '1' && $setnx1 === 0 && $setnx2 === 0 && $bothSawExpired && $wins1 && $wins2
        && $now === $mine2 && $now !== $mine1;
    line('recipe:', sprintf('W1 and W2 both GET the expired timestamp; W1\'s GETSET returns it: W1 %s; W2 (clock 1 s ahead) gets W1\'s fresh timestamp back, which looks expired to it: W2 %s',
        $wins1 ? 'holds' : 'waits', $wins2 ? 'holds too' : 'waits'), $race, 'race reproduced', 'race NOT reproduced');
    printf("   %-10s %s, and W2's GETSET overwrote W1's timestamp (W1 wrote %s, the key now has %s)\n",
        '', $wins1 && $wins2 ? 'two holders' : 'one holder', $mine1, $now);

    $got = [];
    foreach ($waiters as $name => $wait) {
        $got[$name] = explode(' ', $wait());
    }
    $ok = count($got) === 2;
    foreach ($got as $g) {
        $ok = $ok && count($g) === 3 && $g[2] === 'true';
    }
    $spans = $ok ? array_map(fn ($g) => [(float) $g[0], (float) $g[1]], $got) : [];
    usort($spans, fn ($a, $b) => $a[0] <=> $b[0]);
    $held = $rlTook === 'true' && $ok && $spans[0][0] >= $timeout - 0.1 && $spans[0][1] <= $spans[1][0];
    $describe = $ok ? sprintf('%.2f-%.2f s and %.2f-%.2f s after the kill',
        $spans[0][0], $spans[0][1], $spans[1][0], $spans[1][1]) : 'a waiter failed: ' . json_encode($got);
    line('redislock:', "expiry is Redis's PX, no client clocks: W1 and W2 both acquire(3.0) the killed holder's lock and hold it in turn ($describe), each seeing its own token",
        $held, 'held', 'FAILED');
    (new Resp($url, 'cleanup', true))->cmd('DEL', $key);
    return [$race, $held];
};

/* ---------------------------------------------------------------------- */
$scenarios['SET NX EX + DEL'] = function () use ($url, $prefix): array {
    echo "4) SET NX EX + plain DEL: SET key token NX EX 1, DEL key to release\n";
    $key = $prefix . 'setnxex';
    $lockKey = $prefix . 'setnxex-redislock';
    [$a, $b, $c] = [new Resp($url, 'A'), new Resp($url, 'B'), new Resp($url, 'C')];
    // Three clients of redislock; reentrant => false makes each object compete
    // like a separate process would.
    $opt = ['reentrant' => false];
    [$la, $lb, $lc] = [new RedisLock($lockKey, 1.0, $url, $opt), new RedisLock($lockKey, 1.0, $url, $opt),
                       new RedisLock($lockKey, 1.0, $url, $opt)];

    $aSet = $a->cmd('SET', $key, 'A', 'NX', 'EX', '1');
    $aGot = $la->acquire();
    usleep(1100000);                      // A works 1.1 s: its 1 s lease runs out
    $bSet = $b->cmd('SET', $key, 'B', 'NX', 'EX', '1');
    $bGot = $lb->acquire();
    $bToken = $lb->token();
    $aDel = $a->cmd('DEL', $key);         // A is done: releases "its" lock
    $aRel = $la->release();
    $afterA = $c->cmd('GET', $lockKey);
    $cSet = $c->cmd('SET', $key, 'C', 'NX', 'EX', '1');   // while B still works
    $cGot = $lc->acquire();
    $value = $c->cmd('GET', $key);
    $bRel = $lb->release();
    $cAfter = $lc->acquire();
    $lc->release();

    $race = $aSet === 'OK' && $bSet === 'OK' && $aDel === 1 && $cSet === 'OK' && $value === 'C';
    line('recipe:', sprintf('A\'s 1 s lease ran out while it worked; B SET -> %s; A\'s DEL -> %d deleted B\'s lock; C SET -> %s while B works: B and C both hold',
        $bSet ?? 'nil', $aDel, $cSet ?? 'nil'), $race, 'race reproduced', 'race NOT reproduced');
    $held = $aGot && $bGot && !$aRel && $afterA === $bToken && !$cGot && $bRel && $cAfter;
    line('redislock:', sprintf('same steps: B acquired; A\'s release() -> %s deleted nothing (B\'s token is still in the key); C\'s acquire() -> %s until B released',
        var_export($aRel, true), var_export($cGot, true)), $held, 'held', 'FAILED');
    return [$race, $held];
};

/* ---------------------------------------------------------------------- */
echo "redislock ", phpversion('redislock'), ": the blog recipes vs redislock on $url\n\n";
$t0 = microtime(true);
foreach ($scenarios as $name => $run) {
    try {
        $results[$name] = $run();
    } catch (Throwable $e) {
        printf("   error: %s: %s\n", get_class($e), $e->getMessage());
        $results[$name] = [false, false];
    }
    echo "\n";
}

$races = count(array_filter($results, fn ($r) => $r[0]));
$held = count(array_filter($results, fn ($r) => $r[1]));
$n = count($results);
printf("summary: %d of %d races reproduced, redislock held in %d of %d scenarios (%.1f s)\n", $races, $n, $held, $n, microtime(true) - $t0);
exit($races === $n && $held === $n ? 0 : 1);

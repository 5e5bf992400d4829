<?php

declare(strict_types=1);

/*
 * Checks that one contender really is a lock before it is measured, with
 * two processes on one fresh key:
 *   1. A acquires the free lock;
 *   2. B (another process) cannot acquire it while A holds it;
 *   3. B's blocking acquire returns only after A released (A holds ~150 ms);
 *   4. B's release succeeds and A can take the lock again.
 * Prints one line and exits 0 when everything held, 1 otherwise.
 *
 *   php -d extension=.../redislock.so bench/check.php --contender=predis --port=6379
 *   ... --topology=redlock:127.0.0.1:P1,... instead of --port: the topology suite (bench/topologies.php)
 */

require __DIR__ . '/lib/bootstrap.php';

$opt = cli_options(['contender' => null, 'port' => '', 'topology' => '']);
$name = $opt['contender'];
$redis = bench_target($opt);
$key = fresh_key('check', $name);

function fail(string $why): never
{
    global $name;
    echo "FAIL $name: $why\n";
    exit(1);
}

// Fork before any connection exists, so B shares nothing with A.
[$aSock, $bSock] = stream_socket_pair(STREAM_PF_UNIX, STREAM_SOCK_STREAM, STREAM_IPPROTO_IP);
$pid = pcntl_fork();
if ($pid === 0) {
    fclose($aSock);
    $verdict = 'ok';
    try {
        $b = target_contender($name, $redis);
        fwrite($bSock, "ready\n");
        if (trim((string) fgets($bSock)) !== 'held') {
            throw new RuntimeException('A did not report holding the lock');
        }
        if ($b->tryAcquire($key)) {
            throw new RuntimeException('B acquired the lock while A held it');
        }
        $asked = hrtime(true);
        if (!$b->acquireBlocking($key, 5.0)) {
            throw new RuntimeException('B\'s blocking acquire did not get the lock within 5 s after A released it');
        }
        $got = hrtime(true);
        $released = trim((string) fgets($bSock)); // "released <hrtime before A's release call>"
        if (!preg_match('/^released (\d+)$/', $released, $m) || $got < (int) $m[1]) {
            throw new RuntimeException('B\'s blocking acquire returned before A released');
        }
        if (!$b->release()) {
            throw new RuntimeException('B could not release its own lock');
        }
        $verdict = sprintf('ok %.1f', ($got - $asked) / 1e6);
    } catch (Throwable $e) {
        $verdict = get_class($e) . ': ' . $e->getMessage();
    }
    @fwrite($bSock, str_replace("\n", ' ', $verdict) . "\n");
    exit(0);
}

fclose($bSock);
stream_set_timeout($aSock, 30);
try {
    $a = target_contender($name, $redis);
    if (trim((string) fgets($aSock)) !== 'ready') {
        fail('process B did not start: ' . trim((string) fgets($aSock)));
    }
    if (!$a->tryAcquire($key)) {
        fail('A could not acquire a free lock');
    }
    fwrite($aSock, "held\n");
    usleep(150000);
    $releasing = hrtime(true);
    if (!$a->release()) {
        fail('A could not release its own lock');
    }
    fwrite($aSock, "released $releasing\n");
    $verdict = trim((string) fgets($aSock));
    pcntl_waitpid($pid, $status);
    if (!str_starts_with($verdict, 'ok ')) {
        fail($verdict === '' ? 'process B died' : $verdict);
    }
    if (!$a->tryAcquire($key)) {
        fail('A could not acquire the lock again after B released it');
    }
    if (!$a->release()) {
        fail('A could not release its second hold');
    }
} catch (Throwable $e) {
    posix_kill($pid, SIGKILL);
    pcntl_waitpid($pid, $status);
    fail(get_class($e) . ': ' . $e->getMessage());
}
printf("ok   %-32s exclusive; a blocked acquire got the lock %s ms after asking (holder kept it 150 ms)\n",
    target_label($name, $redis), substr($verdict, 3));

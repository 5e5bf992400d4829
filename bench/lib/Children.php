<?php

declare(strict_types=1);

/*
 * The forked processes of one contended run (bench/contended.php,
 * bench/primitive.php) and their start protocol over a socket pair each:
 * children fork, connect and warm up, then say "ready"; the parent takes
 * its INFO snapshots and sends all of them the same start time ("go T",
 * hrtime, CLOCK_MONOTONIC); each child sleeps until then, runs, writes its
 * result file and says "done"; it stays alive (idle, connected) until the
 * parent's last snapshot and "exit", so connection set-up and teardown
 * never count.
 */
final class Children
{
    /** @var list<array{pid: int, sock: resource, file: string}> */
    public array $list = [];

    private function __construct(private readonly string $label)
    {
    }

    /**
     * Forks $procs children; child $c runs $body($c, $resultFile, $sock) and
     * exits 0 (1 after a Throwable, named on stderr). $label names the run
     * in messages; the parent waits at most $timeout s for a child's line.
     */
    public static function fork(int $procs, string $resultDir, int $timeout, string $label, callable $body): self
    {
        $children = new self($label);
        for ($c = 0; $c < $procs; $c++) {
            [$parentEnd, $childEnd] = stream_socket_pair(STREAM_PF_UNIX, STREAM_SOCK_STREAM, STREAM_IPPROTO_IP);
            $resultFile = "$resultDir/$c.json";
            $pid = pcntl_fork();
            if ($pid === -1) {
                throw new RuntimeException('fork failed');
            }
            if ($pid === 0) {
                fclose($parentEnd);
                foreach ($children->list as $other) {
                    fclose($other['sock']);
                }
                try {
                    $body($c, $resultFile, $childEnd);
                    exit(0);
                } catch (Throwable $e) {
                    fwrite(STDERR, "$label child: " . get_class($e) . ': ' . $e->getMessage()
                        . ($e->getPrevious() ? ' (' . $e->getPrevious()->getMessage() . ')' : '') . "\n");
                    exit(1);
                }
            }
            fclose($childEnd);
            stream_set_timeout($parentEnd, $timeout);
            $children->list[] = ['pid' => $pid, 'sock' => $parentEnd, 'file' => $resultFile];
        }
        return $children;
    }

    /** A child, once warmed up: says "ready", then sleeps until the start time it is sent. */
    public static function awaitStart($sock): void
    {
        fwrite($sock, "ready\n");
        $go = fgets($sock);
        if (!is_string($go) || !preg_match('/^go (\d+)$/', trim($go), $m)) {
            exit(3);
        }
        $left = (int) $m[1] - hrtime(true);
        if ($left > 0) {
            time_nanosleep(intdiv($left, 1000000000), $left % 1000000000);
        }
    }

    /** A child, its result file written: says "done" and stays connected until "exit". */
    public static function finish($sock): void
    {
        fwrite($sock, "done\n");
        fgets($sock);
    }

    /**
     * The parent: waits for every child to be ready, takes two snapshots of
     * $stats (their difference is the cost of one snapshot), starts them all
     * 50 ms from now, waits until all are done, takes the last snapshot and
     * lets them exit. Returns [start time, snapshot 0, 1, 2].
     */
    public function run(object $stats): array
    {
        $this->expect('ready', 'a child did not get ready');
        $s0 = $stats->snapshot();
        $s1 = $stats->snapshot();
        $startAt = hrtime(true) + 50_000_000; // 50 ms from now
        foreach ($this->list as $child) {
            fwrite($child['sock'], "go $startAt\n");
        }
        $this->expect('done', 'a child did not finish');
        $s2 = $stats->snapshot();
        foreach ($this->list as $child) {
            fwrite($child['sock'], "exit\n");
        }
        foreach ($this->list as $child) {
            pcntl_waitpid($child['pid'], $status);
        }
        return [$startAt, $s0, $s1, $s2];
    }

    /** Reads $line from every child, or kills them all and exits 1 naming $why. */
    private function expect(string $line, string $why): void
    {
        foreach ($this->list as $child) {
            if (trim((string) fgets($child['sock'])) !== $line) {
                foreach ($this->list as $other) {
                    posix_kill($other['pid'], SIGKILL);
                    pcntl_waitpid($other['pid'], $status);
                }
                fwrite(STDERR, "$this->label: $why\n");
                exit(1);
            }
        }
    }
}

/** User + system CPU time of this process since getrusage() returned $ru0, in µs. */
function cpu_us_since(array $ru0): float
{
    $ru1 = getrusage();
    return ($ru1['ru_utime.tv_sec'] - $ru0['ru_utime.tv_sec']) * 1e6 + ($ru1['ru_utime.tv_usec'] - $ru0['ru_utime.tv_usec'])
         + ($ru1['ru_stime.tv_sec'] - $ru0['ru_stime.tv_sec']) * 1e6 + ($ru1['ru_stime.tv_usec'] - $ru0['ru_stime.tv_usec']);
}

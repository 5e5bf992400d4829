<?php

declare(strict_types=1);

/**
 * Starts and stops the extra redis-servers of the topology suite (plain
 * masters and a local Redis Cluster), each a child of this process, by pid.
 *
 * - Ports are drawn at random from 20000-22700 (below the kernel's
 *   ephemeral range, and low enough that a cluster node's bus port,
 *   port + 10000, stays below 32768). A port (and for cluster nodes its bus
 *   port) must be free to bind on loopback before it is tried.
 * - A server is ready only when INFO server on its port reports the pid of
 *   the child we started (someone else's server may answer there); if the
 *   child exits (port taken after all) or another process answers, it is
 *   killed and another port is tried.
 * - Every pid is also written to $pidFile (one a line) while it runs, so
 *   scripts/bench.sh can kill what a crashed PHP process left behind.
 * - stopAll() kills every server by pid (SIGKILL: nothing here persists),
 *   waits for it and removes its directory. Call it in `finally` and from a
 *   shutdown function; it is idempotent.
 */
final class Servers
{
    private const PORT_LO = 20000;
    private const PORT_HI = 22700;

    /** @var array<int, array{proc: resource, dir: string, port: int}> pid => server */
    private array $running = [];

    /**
     * @param list<string> $prefix command prefix, e.g. ['taskset', '-c', '0'] to pin every server
     *                             (taskset execs redis-server, so the pid stays the server's)
     */
    public function __construct(private readonly array $prefix = [], private readonly ?string $pidFile = null)
    {
    }

    /** Starts one master with extra redis-server arguments; returns its endpoint. */
    public function start(array $args = [], bool $clusterBus = false): Endpoint
    {
        for ($try = 1; $try <= 30; $try++) {
            $port = random_int(self::PORT_LO, self::PORT_HI);
            if (!self::free($port) || ($clusterBus && !self::free($port + 10000))) {
                continue;
            }
            $dir = sys_get_temp_dir() . '/bench-redis-' . $port . '-' . bin2hex(random_bytes(4));
            mkdir($dir);
            $cmd = [...$this->prefix, 'redis-server', '--port', (string) $port, '--bind', '127.0.0.1',
                '--save', '', '--appendonly', 'no', '--dir', $dir, ...$args];
            $proc = proc_open($cmd, [0 => ['file', '/dev/null', 'r'], 1 => ['file', "$dir/redis.log", 'a'],
                2 => ['file', "$dir/redis.log", 'a']], $pipes);
            if (!is_resource($proc)) {
                self::removeDir($dir);
                throw new RuntimeException('could not start redis-server');
            }
            $pid = proc_get_status($proc)['pid'];
            $this->running[$pid] = ['proc' => $proc, 'dir' => $dir, 'port' => $port];
            $this->writePidFile();
            if ($this->waitOurs($pid, $port)) {
                return new Endpoint('127.0.0.1', $port);
            }
            $this->stop($pid);
        }
        throw new RuntimeException('redis-server: none of ours came up on 30 random ports');
    }

    /**
     * Starts a Redis Cluster of $masters masters and no replicas, each node in
     * its own directory, and waits until every node says cluster_state:ok.
     *
     * @return list<Endpoint>
     */
    public function startCluster(int $masters): array
    {
        $nodes = [];
        for ($i = 0; $i < $masters; $i++) {
            $nodes[] = $this->start(['--cluster-enabled', 'yes', '--cluster-config-file', 'nodes.conf',
                '--cluster-node-timeout', '1000'], true);
        }
        $cmd = ['redis-cli', '--cluster', 'create'];
        foreach ($nodes as $n) {
            $cmd[] = "{$n->host}:{$n->port}";
        }
        array_push($cmd, '--cluster-replicas', '0', '--cluster-yes');
        $proc = proc_open($cmd, [0 => ['file', '/dev/null', 'r'], 1 => ['pipe', 'w'], 2 => ['redirect', 1]], $pipes);
        $out = stream_get_contents($pipes[1]);
        fclose($pipes[1]);
        if (proc_close($proc) !== 0) {
            throw new RuntimeException("redis-cli --cluster create failed:\n$out");
        }
        $deadline = hrtime(true) + 20_000_000_000;
        foreach ($nodes as $n) {
            while (!str_contains((string) self::command($n, ['CLUSTER', 'INFO']), 'cluster_state:ok')) {
                if (hrtime(true) > $deadline) {
                    throw new RuntimeException("cluster node {$n->port}: no cluster_state:ok within 20 s");
                }
                usleep(50_000);
            }
        }
        return $nodes;
    }

    /** @return list<int> pids of the running servers */
    public function pids(): array
    {
        return array_keys($this->running);
    }

    public function stop(int $pid): void
    {
        $server = $this->running[$pid] ?? null;
        if ($server === null) {
            return;
        }
        posix_kill($pid, SIGKILL);
        proc_close($server['proc']); // waits for it
        unset($this->running[$pid]);
        $this->writePidFile();
        self::removeDir($server['dir']);
    }

    public function stopAll(): void
    {
        foreach (array_keys($this->running) as $pid) {
            $this->stop($pid);
        }
    }

    public function __destruct()
    {
        $this->stopAll();
    }

    /** Waits at most 10 s until INFO on $port reports process_id $pid. */
    private function waitOurs(int $pid, int $port): bool
    {
        $deadline = hrtime(true) + 10_000_000_000;
        while (hrtime(true) < $deadline) {
            if (!proc_get_status($this->running[$pid]['proc'])['running']) {
                return false;
            }
            $info = self::command(new Endpoint('127.0.0.1', $port), ['INFO', 'server']);
            if (is_string($info) && preg_match('/^process_id:(\d+)/m', $info, $m)) {
                return (int) $m[1] === $pid;
            }
            usleep(50_000);
        }
        return false;
    }

    /** One command on a short-lived connection; null when the server does not answer. */
    private static function command(Endpoint $e, array $args): mixed
    {
        try {
            $r = new Redis();
            if (!@$r->connect($e->host, $e->port, 1.0)) {
                return null;
            }
            $r->setOption(Redis::OPT_READ_TIMEOUT, 2.0);
            $reply = $r->rawCommand(...$args);
            $r->close();
            return $reply;
        } catch (RedisException) {
            return null;
        }
    }

    /** True when nothing listens on 127.0.0.1:$port and it can be bound now. */
    private static function free(int $port): bool
    {
        $s = @stream_socket_server("tcp://127.0.0.1:$port", $errno, $errstr);
        if ($s === false) {
            return false;
        }
        fclose($s);
        return true;
    }

    private function writePidFile(): void
    {
        if ($this->pidFile !== null) {
            file_put_contents($this->pidFile, implode('', array_map(fn ($p) => "$p\n", array_keys($this->running))));
        }
    }

    private static function removeDir(string $dir): void
    {
        foreach (glob("$dir/{,.}[!.]*", GLOB_BRACE) ?: [] as $f) {
            @unlink($f);
        }
        @rmdir($dir);
    }
}

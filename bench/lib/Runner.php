<?php

declare(strict_types=1);

/**
 * Runs one bench script in its own PHP process (with the extension loaded)
 * and returns its stdout; stderr goes to ours. A process that outlives its
 * time limit is killed with its children (found by pid in /proc).
 */
final class Runner
{
    public function __construct(private readonly string $extension)
    {
    }

    /** @return array{0: int, 1: string} exit code (124 on timeout), stdout */
    public function run(string $script, array $args, float $timeLimit): array
    {
        $cmd = [PHP_BINARY, '-d', 'extension=' . $this->extension, __DIR__ . '/../' . $script];
        foreach ($args as $name => $value) {
            $cmd[] = "--$name=$value";
        }
        // stderr is inherited as is: passing STDERR made PHP seek fd 2 to 0, which
        // rewound a log file that stdout and stderr share (bench.sh > log 2>&1).
        $proc = proc_open($cmd, [0 => ['file', '/dev/null', 'r'], 1 => ['pipe', 'w']], $pipes);
        if (!is_resource($proc)) {
            return [127, ''];
        }
        stream_set_blocking($pipes[1], false);
        $out = '';
        $deadline = hrtime(true) + (int) ($timeLimit * 1e9);
        while (true) {
            $read = [$pipes[1]];
            $write = $except = null;
            if (stream_select($read, $write, $except, 0, 200000)) {
                $chunk = fread($pipes[1], 65536);
                if ($chunk === '' || $chunk === false) {
                    if (feof($pipes[1])) {
                        break;
                    }
                } else {
                    $out .= $chunk;
                }
            }
            if (hrtime(true) > $deadline) {
                self::killTree(proc_get_status($proc)['pid']);
                fclose($pipes[1]);
                proc_close($proc);
                return [124, $out];
            }
        }
        fclose($pipes[1]);
        return [proc_close($proc), $out];
    }

    /** SIGKILL $pid and every process descended from it. */
    private static function killTree(int $pid): void
    {
        $children = [];
        foreach (glob('/proc/[0-9]*/stat') ?: [] as $stat) {
            $text = @file_get_contents($stat);
            if ($text !== false && preg_match('/^(\d+) \(.*\) \S (\d+)/s', $text, $m)) {
                $children[(int) $m[2]][] = (int) $m[1];
            }
        }
        $todo = [$pid];
        while ($todo) {
            $p = array_pop($todo);
            posix_kill($p, SIGKILL);
            array_push($todo, ...($children[$p] ?? []));
        }
    }
}

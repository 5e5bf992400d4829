<?php

namespace RedisLock\Bridge\Console;

/**
 * The `redislock` command line (`vendor/bin/redislock`): who holds a lock,
 * from a shell.
 *
 *     redislock inspect NAME [--servers=URL]... [--prefix=P] [--json]
 *     redislock release NAME --force [--servers=URL]... [--prefix=P]
 *     redislock watch NAME [--interval=S] [--count=N] [--servers=URL]... [--prefix=P]
 *
 * `inspect` prints what `RedisLock::inspect()` returns (mode, owners,
 * ttl, readers, waiting, the semaphore of the same name), `--json` that
 * array as JSON; `release --force` deletes the lock whoever holds it
 * (`forceRelease()`); `watch` prints one line per interval until
 * interrupted (or `--count` lines). Without `--servers`, the ini
 * `redislock.servers`. Exit status: 0 done, 1 Redis failed or the lock
 * was not there to release, 2 bad usage. No password is ever printed:
 * messages are the extension's own, which mask it.
 */
final class Cli
{
    /** Exit status: bad usage. */
    public const USAGE = 2;

    private const HELP = <<<'TXT'
        usage: redislock inspect NAME [--servers=URL]... [--prefix=P] [--json]
               redislock release NAME --force [--servers=URL]... [--prefix=P]
               redislock watch NAME [--interval=SECONDS] [--count=N] [--servers=URL]... [--prefix=P]

        inspect  who holds NAME: mode (write/read), owners' tokens, ttl, readers,
                 waiting, and the semaphore of the same name; --json: what
                 RedisLock::inspect() returns, as JSON
        release  deletes NAME whoever holds it (RedisLock::forceRelease()); needs --force
        watch    one line per interval (default 1 s) until interrupted, or --count lines

        --servers  a Redis URL (repeat it for Redlock); default: ini redislock.servers
        --prefix   the key prefix your application uses (option "prefix")

        TXT;

    /** @var resource */
    private $out;

    /** @var resource */
    private $err;

    private ?Target $target;

    /**
     * @param  resource  $out  where results go (STDOUT)
     * @param  resource  $err  where errors and usage go (STDERR)
     * @param  Target|null  $target  the locks looked at without --servers and --prefix
     *     (a framework's configuration); null: the ini redislock.servers
     */
    public function __construct($out, $err, ?Target $target = null)
    {
        $this->out = $out;
        $this->err = $err;
        $this->target = $target;
    }

    /**
     * Runs one command line.
     *
     * @param  list<string>  $args  the arguments after the program name
     * @return int the exit status
     */
    public function run(#[\SensitiveParameter] array $args): int
    {
        try {
            [$command, $name, $flags] = self::parse($args);
        } catch (\InvalidArgumentException $e) {
            fwrite($this->err, 'redislock: ' . $e->getMessage() . "\n\n" . self::HELP);
            return self::USAGE;
        }
        if ($command === 'help') {
            fwrite($this->out, self::HELP);
            return 0;
        }
        return $this->execute($command, $name, $flags);
    }

    /**
     * Runs one command (inspect, release, watch) on the lock $name.
     *
     * @param  array<string, mixed>  $flags  servers (list), prefix, json, force, interval, count
     * @return int the exit status
     */
    public function execute(string $command, string $name, #[\SensitiveParameter] array $flags): int
    {
        try {
            $target = $this->target($flags);
            return match ($command) {
                'inspect' => $this->inspect($name, $target, !empty($flags['json'])),
                'release' => $this->release($name, $target, !empty($flags['force'])),
                'watch' => $this->watch($name, $target, $flags),
                default => throw new \ValueError(sprintf('unknown command "%s"', $command)),
            };
        } catch (\ValueError | \TypeError $e) {
            fwrite($this->err, 'redislock: ' . $e->getMessage() . "\n");
            return self::USAGE;
        } catch (\RedisLock\LockException $e) {
            fwrite($this->err, 'redislock: ' . $e->getMessage() . "\n");
            return 1;
        }
    }

    /**
     * The locks to look at: --servers and --prefix when given, else the
     * framework's (the constructor's target), else ini redislock.servers.
     *
     * @param  array<string, mixed>  $flags
     */
    private function target(#[\SensitiveParameter] array $flags): Target
    {
        $servers = $flags['servers'] ?? null;
        if (($servers === null || $servers === []) && !isset($flags['prefix'])) {
            return $this->target ?? new ServerTarget();
        }
        $servers = is_array($servers) && count($servers) === 1 ? $servers[0] : ($servers ?: null);
        return new ServerTarget($servers, isset($flags['prefix']) ? ['prefix' => $flags['prefix']] : []);
    }

    /**
     * Splits the arguments into the command, the name and the flags.
     *
     * @param  list<string>  $args
     * @return array{0: string, 1: string, 2: array<string, mixed>}
     * @throws \InvalidArgumentException on bad usage
     */
    private static function parse(#[\SensitiveParameter] array $args): array
    {
        $known = ['servers' => 'list', 'prefix' => 'value', 'json' => 'switch', 'force' => 'switch',
            'interval' => 'value', 'count' => 'value', 'help' => 'switch'];
        $flags = [];
        $words = [];
        foreach ($args as $arg) {
            if (!str_starts_with($arg, '--')) {
                $words[] = $arg;
                continue;
            }
            [$flag, $value] = array_pad(explode('=', substr($arg, 2), 2), 2, null);
            $kind = $known[$flag] ?? throw new \InvalidArgumentException(sprintf('unknown option --%s', $flag));
            if ($kind === 'switch' && $value !== null) {
                throw new \InvalidArgumentException(sprintf('--%s takes no value', $flag));
            }
            if ($kind !== 'switch' && ($value === null || $value === '')) {
                throw new \InvalidArgumentException(sprintf('--%s needs a value: --%s=...', $flag, $flag));
            }
            $kind === 'list' ? $flags[$flag][] = $value : $flags[$flag] = $value ?? true;
        }
        if (isset($flags['help']) || $words === [] || $words === ['help']) {
            return ['help', '', []];
        }
        $command = array_shift($words);
        if (!in_array($command, ['inspect', 'release', 'watch'], true)) {
            throw new \InvalidArgumentException(sprintf('unknown command "%s"', $command));
        }
        if (count($words) !== 1) {
            throw new \InvalidArgumentException(sprintf('%s takes one lock name', $command));
        }
        $allowed = ['inspect' => ['json'], 'release' => ['force'], 'watch' => ['interval', 'count']][$command];
        foreach (array_keys($flags) as $flag) {
            if (!in_array($flag, ['servers', 'prefix', ...$allowed], true)) {
                throw new \InvalidArgumentException(sprintf('--%s is not an option of %s', $flag, $command));
            }
        }
        return [$command, $words[0], $flags];
    }

    private function inspect(string $name, Target $target, bool $json): int
    {
        $seen = $target->inspect($name);
        fwrite($this->out, $json
            ? json_encode($seen, JSON_PRETTY_PRINT | JSON_UNESCAPED_SLASHES | JSON_THROW_ON_ERROR) . "\n"
            : Describe::inspection($name, $seen));
        return 0;
    }

    private function release(string $name, Target $target, bool $force): int
    {
        if (!$force) {
            fwrite($this->err, "redislock: release deletes \"$name\" whoever holds it; say --force to do it\n");
            return self::USAGE;
        }
        $deleted = $target->forceRelease($name);
        fwrite($this->out, $deleted ? "released \"$name\"\n" : "\"$name\" was not held\n");
        return $deleted ? 0 : 1;
    }

    /** @param array<string, mixed> $flags */
    private function watch(string $name, Target $target, array $flags): int
    {
        $interval = $flags['interval'] ?? '1';
        $count = $flags['count'] ?? null;
        if (!is_numeric($interval) || (float) $interval <= 0 || (float) $interval > 3600) {
            throw new \ValueError('--interval must be a number of seconds above 0, at most 3600');
        }
        if ($count !== null && (!preg_match('/^[0-9]+$/', $count) || (int) $count < 1)) {
            throw new \ValueError('--count must be a whole number above 0');
        }
        for ($i = 0; $count === null || $i < (int) $count; $i++) {
            if ($i > 0) {
                usleep((int) ((float) $interval * 1e6));
            }
            fwrite($this->out, date('H:i:s') . ' ' . Describe::line($target->inspect($name)) . "\n");
        }
        return 0;
    }
}

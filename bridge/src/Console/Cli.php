<?php

namespace RedisLock\Bridge\Console;

use RedisLock\Bridge\Metrics;

/**
 * The `redislock` command line (`vendor/bin/redislock`): who holds a lock,
 * from a shell.
 *
 *     redislock inspect NAME [--servers=URL]... [--prefix=P] [--json]
 *     redislock release NAME --force [--servers=URL]... [--prefix=P]
 *     redislock watch NAME [--interval=S] [--count=N] [--servers=URL]... [--prefix=P]
 *     redislock metrics [--url=URL | --file=PATH|-] [--svg[=FILE]]
 *
 * `inspect` prints what `RedisLock::inspect()` returns (mode, owners,
 * ttl, readers, waiting, the semaphore of the same name), `--json` that
 * array as JSON; `release --force` deletes the lock whoever holds it
 * (`forceRelease()`); `watch` prints one line per interval until
 * interrupted (or `--count` lines). Without `--servers`, the ini
 * `redislock.servers`. `metrics` prints a Prometheus exposition: this
 * process's own `RedisLock::metrics()` (a command line process counts
 * only itself), or a pool's from its metrics route (`--url`), or a saved
 * one (`--file`, `-` for standard input); `--svg` draws its wait-time
 * histograms instead ({@see WaitHistogramSvg}). Exit status: 0 done, 1
 * Redis failed, the lock was not there to release or the metrics could
 * not be had, 2 bad usage. No password is ever printed: messages are the
 * extension's own, which mask it, and a URL is shown without its
 * credentials and query.
 */
final class Cli
{
    /** Exit status: bad usage. */
    public const USAGE = 2;

    /** How long `metrics --url` waits for the route's answer, in seconds. */
    public const URL_TIMEOUT = 10.0;

    private const HELP = <<<'TXT'
        usage: redislock inspect NAME [--servers=URL]... [--prefix=P] [--json]
               redislock release NAME --force [--servers=URL]... [--prefix=P]
               redislock watch NAME [--interval=SECONDS] [--count=N] [--servers=URL]... [--prefix=P]
               redislock metrics [--url=URL | --file=PATH|-] [--svg[=FILE]]

        inspect  who holds NAME: mode (write/read), owners' tokens, ttl, readers,
                 waiting, and the semaphore of the same name; --json: what
                 RedisLock::inspect() returns, as JSON
        release  deletes NAME whoever holds it (RedisLock::forceRelease()); needs --force
        watch    one line per interval (default 1 s) until interrupted, or --count lines
        metrics  RedisLock::metrics() in Prometheus's text format: this process's own
                 figures (a command line process counts only itself); --url: a
                 PHP-FPM pool's, from its metrics route; --file: a saved exposition
                 (- reads standard input); --svg: its wait-time histograms as an
                 SVG image instead (--svg=FILE writes it to FILE)

        --servers  a Redis URL (repeat it for Redlock); default: ini redislock.servers
        --prefix   the key prefix your application uses (option "prefix")

        TXT;

    /** @var resource */
    private $out;

    /** @var resource */
    private $err;

    private ?Target $target;

    /** @var resource|null */
    private $in;

    /**
     * @param  resource  $out  where results go (STDOUT)
     * @param  resource  $err  where errors and usage go (STDERR)
     * @param  Target|null  $target  the locks looked at without --servers and --prefix
     *     (a framework's configuration); null: the ini redislock.servers
     * @param  resource|null  $in  what `metrics --file=-` reads; null: STDIN
     */
    public function __construct($out, $err, ?Target $target = null, $in = null)
    {
        $this->out = $out;
        $this->err = $err;
        $this->target = $target;
        $this->in = $in;
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
     * Runs one command (inspect, release, watch on the lock $name; metrics).
     *
     * @param  string  $name  the lock's name ('' for metrics)
     * @param  array<string, mixed>  $flags  servers (list), prefix, json, force, interval, count;
     *     for metrics url, file, svg (true: to the output; a string: that file)
     * @return int the exit status
     */
    public function execute(string $command, string $name, #[\SensitiveParameter] array $flags): int
    {
        try {
            if ($command === 'metrics') {
                return $this->metrics($flags);
            }
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
        } catch (\RuntimeException | \LogicException $e) {
            // The extension's LockException, metrics that could not be had.
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
            'interval' => 'value', 'count' => 'value', 'help' => 'switch',
            'url' => 'value', 'file' => 'value', 'svg' => 'optional'];
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
            if ($kind === 'optional' && $value === '') {
                throw new \InvalidArgumentException(sprintf('--%s=... needs a value (or --%s alone)', $flag, $flag));
            }
            if (($kind === 'value' || $kind === 'list') && ($value === null || $value === '')) {
                throw new \InvalidArgumentException(sprintf('--%s needs a value: --%s=...', $flag, $flag));
            }
            $kind === 'list' ? $flags[$flag][] = $value : $flags[$flag] = $value ?? true;
        }
        if (isset($flags['help']) || $words === [] || $words === ['help']) {
            return ['help', '', []];
        }
        $command = array_shift($words);
        if (!in_array($command, ['inspect', 'release', 'watch', 'metrics'], true)) {
            throw new \InvalidArgumentException(sprintf('unknown command "%s"', $command));
        }
        if ($command === 'metrics' ? $words !== [] : count($words) !== 1) {
            throw new \InvalidArgumentException($command === 'metrics'
                ? sprintf('metrics takes no lock name ("%s"); its source is --url or --file', $words[0])
                : sprintf('%s takes one lock name', $command));
        }
        $allowed = [
            'inspect' => ['servers', 'prefix', 'json'],
            'release' => ['servers', 'prefix', 'force'],
            'watch' => ['servers', 'prefix', 'interval', 'count'],
            'metrics' => ['url', 'file', 'svg'],
        ][$command];
        foreach (array_keys($flags) as $flag) {
            if (!in_array($flag, $allowed, true)) {
                throw new \InvalidArgumentException(sprintf('--%s is not an option of %s', $flag, $command));
            }
        }
        return [$command, $words[0] ?? '', $flags];
    }

    /**
     * `metrics`: the exposition (this process's, --url's or --file's), or
     * its wait histograms as SVG (--svg).
     *
     * @param  array<string, mixed>  $flags  url, file, svg
     * @throws \RuntimeException when the exposition cannot be had, read or written
     * @throws \LogicException when this process's extension has no metrics
     */
    private function metrics(#[\SensitiveParameter] array $flags): int
    {
        $url = $flags['url'] ?? null;
        $file = $flags['file'] ?? null;
        if ($url !== null && $file !== null) {
            throw new \ValueError('--url and --file are two sources of metrics: give one');
        }
        if ($url !== null) {
            [$text, $source] = [self::fetch((string) $url), self::shownUrl((string) $url)];
        } elseif ($file !== null) {
            [$text, $source] = [$this->read((string) $file), $file === '-' ? 'standard input' : (string) $file];
        } else {
            $text = Metrics::exposition();
            $source = 'the command line process itself';
            fwrite($this->err, "redislock: these are this command's own figures (a command line process counts only itself);\n"
                . "           a PHP-FPM pool's: --url=https://HOST/redislock/metrics (its metrics route)\n");
        }
        $exposition = Exposition::parse($text);
        $svg = $flags['svg'] ?? null;
        if ($svg === null) {
            fwrite($this->out, $text);
            return 0;
        }
        $drawing = WaitHistogramSvg::render($exposition, $source);
        if ($svg === true) {
            fwrite($this->out, $drawing);
            return 0;
        }
        if (@file_put_contents((string) $svg, $drawing) === false) {
            throw new \RuntimeException(sprintf('cannot write %s', $svg));
        }
        $drawn = [];
        foreach (WaitHistogramSvg::histograms($exposition) as $primitive => $histogram) {
            $count = $histogram['buckets'] === [] ? $histogram['count'] : $histogram['buckets'][array_key_last($histogram['buckets'])]['count'];
            $drawn[] = sprintf('%s (%s acquire%s)', $primitive, number_format($count), $count == 1 ? '' : 's');
        }
        fwrite($this->out, sprintf("wrote %s: %s\n", $svg, $drawn === [] ? 'no acquire counted yet' : 'wait histograms of ' . implode(', ', $drawn)));
        return 0;
    }

    /**
     * The exposition a metrics route serves (HTTP GET, with the URL's
     * user and password as basic authentication).
     *
     * @throws \ValueError when the URL is not http(s)
     * @throws \RuntimeException when there is no answer, or not a 200
     */
    private static function fetch(#[\SensitiveParameter] string $url): string
    {
        $scheme = strtolower((string) parse_url($url, PHP_URL_SCHEME));
        if (!in_array($scheme, ['http', 'https'], true) || parse_url($url, PHP_URL_HOST) === null) {
            throw new \ValueError('--url takes the http:// or https:// URL of a metrics route (a saved exposition: --file=PATH)');
        }
        $context = stream_context_create(['http' => [
            'method' => 'GET',
            'timeout' => self::URL_TIMEOUT,
            'ignore_errors' => true,
            'header' => "Accept: text/plain;version=0.0.4, */*;q=0.1\r\n",
            'user_agent' => 'redislock-cli',
        ]]);
        // The wrapper's warnings show the URL, its password included.
        set_error_handler(static fn (): bool => true);
        try {
            $body = file_get_contents($url, false, $context);
            $headers = function_exists('http_get_last_response_headers') ? (http_get_last_response_headers() ?? []) : ($http_response_header ?? []);
        } finally {
            restore_error_handler();
        }
        $shown = self::shownUrl($url);
        if ($body === false) {
            throw new \RuntimeException(sprintf('no answer from %s (refused, unreachable or over %s s)', $shown, self::URL_TIMEOUT));
        }
        $status = 0;
        foreach ($headers as $header) {
            if (preg_match('#^HTTP/\S+\s+(\d{3})#', $header, $m)) {
                $status = (int) $m[1];  // the last one, after redirects
            }
        }
        if ($status !== 200) {
            $first = trim(strtok(ltrim($body), "\n") ?: '');
            throw new \RuntimeException(sprintf('%s answered HTTP %d%s', $shown, $status, $first === '' ? '' : ': ' . substr($first, 0, 200)));
        }
        return $body;
    }

    /** A URL as messages show it: scheme, host, port and path; no user, password, query or fragment. */
    private static function shownUrl(#[\SensitiveParameter] string $url): string
    {
        $parts = parse_url($url);
        if ($parts === false || !isset($parts['host'])) {
            return '(the URL given)';
        }
        return sprintf('%s://%s%s%s', $parts['scheme'] ?? 'http', $parts['host'], isset($parts['port']) ? ':' . $parts['port'] : '', $parts['path'] ?? '/');
    }

    /**
     * A saved exposition ('-': standard input).
     *
     * @throws \RuntimeException when it cannot be read
     */
    private function read(string $file): string
    {
        if ($file === '-') {
            $text = stream_get_contents($this->in ?? (defined('STDIN') ? STDIN : fopen('php://stdin', 'r')));
        } else {
            $text = is_file($file) && is_readable($file) ? @file_get_contents($file) : false;
        }
        if ($text === false) {
            throw new \RuntimeException(sprintf('cannot read %s', $file === '-' ? 'standard input' : $file));
        }
        return $text;
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

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
 *     redislock doctor [NAME] [--servers=URL]... [--prefix=P] [--cluster | --sentinel=NAME] [--json]
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
 * histograms instead ({@see WaitHistogramSvg}). `doctor` checks every
 * server under the locks (`RedisLock::diagnose()`, {@see Doctor}): can it
 * lose a held lock by itself, its round trip, what it has of the
 * protocol's needs. Exit status: 0 done (doctor: every server known
 * safe), 1 Redis failed, the lock was not there to release, the metrics
 * could not be had, or doctor found a server unsafe or unknown, 2 bad
 * usage. No password is ever printed: messages are the
 * extension's own, which mask it, and a URL is shown without its
 * credentials and query. Secrets can stay out of `ps`: `--servers-file`
 * and `--url-file`, or `REDISLOCK_SERVERS` and `REDISLOCK_METRICS_URL`.
 * What `metrics` reads is bounded: {@see self::MAX_BYTES}, and from a
 * route {@see self::URL_TIMEOUT} seconds in all; a route's own words are
 * shown without control characters and without the URL's query.
 */
final class Cli
{
    /** Exit status: bad usage. */
    public const USAGE = 2;

    /** How long `metrics --url` waits for the route's whole answer, in seconds. */
    public const URL_TIMEOUT = 10.0;

    /** The most bytes `metrics` reads from a route, a file or standard input. */
    public const MAX_BYTES = 16 * 1024 * 1024;

    /** The lock whose keys `doctor` asks the ACL about when no NAME is given. */
    public const DOCTOR_NAME = 'redislock-doctor';

    /** The environment variable of the Redis URLs (whitespace or commas between them). */
    public const SERVERS_ENV = 'REDISLOCK_SERVERS';

    /** The environment variable of the metrics route's URL. */
    public const URL_ENV = 'REDISLOCK_METRICS_URL';

    private const HELP = <<<'TXT'
        usage: redislock inspect NAME [--servers=URL | --servers-file=PATH]... [--prefix=P] [--json]
               redislock release NAME --force [--servers=URL | --servers-file=PATH]... [--prefix=P]
               redislock watch NAME [--interval=SECONDS] [--count=N] [--servers=URL | --servers-file=PATH]... [--prefix=P]
               redislock metrics [--url=URL | --url-file=PATH | --file=PATH|-] [--timeout=SECONDS] [--svg[=FILE]]
               redislock doctor [NAME] [--servers=URL | --servers-file=PATH]... [--prefix=P] [--cluster | --sentinel=NAME] [--json]

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
        doctor   checks every server under the locks (NAME: the lock whose keys the ACL
                 is asked about, default redislock-doctor): can it lose a held lock by
                 itself (eviction, no append-only file), round trip, scripts, TIME in
                 scripts, CLIENT UNBLOCK, compare-and-delete, ACL; exit 0 when every
                 server is known safe, 1 when one is unsafe or unknown

        --servers       a Redis URL (repeat it for Redlock); default: $REDISLOCK_SERVERS
                        (URLs between spaces or commas), else ini redislock.servers
        --servers-file  a file of Redis URLs, one a line: a password there stays out of ps
        --prefix        the key prefix your application uses (option "prefix")
        --cluster       the servers are Redis Cluster seed nodes (option "cluster")
        --sentinel      the servers are Sentinels of this master group (option "sentinel")
        --url-file      a file whose first line is the metrics route's URL; default of
                        --url: $REDISLOCK_METRICS_URL
        --timeout       how long the route's whole answer may take (default 10 s, at most 300)
        Limits: metrics reads at most 16 MiB, from a route within --timeout in all.
        Passwords are never printed; a route's answer is shown without control
        characters, and without the URL's query or credentials.

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
                'doctor' => $this->doctor($name === '' ? self::DOCTOR_NAME : $name, $target, !empty($flags['json'])),
                default => throw new \ValueError(sprintf('unknown command "%s"', $command)),
            };
        } catch (\ValueError | \TypeError $e) {
            fwrite($this->err, 'redislock: ' . $e->getMessage() . "\n");
            return self::USAGE;
        } catch (\RuntimeException | \LogicException $e) {
            // The extension's LockException, metrics that could not be had.
            fwrite($this->err, 'redislock: ' . $e->getMessage() . "\n");
            return 1;
        } catch (\Throwable $e) {
            // Anything else still ends in a message and a status, never a
            // PHP fatal error.
            fwrite($this->err, sprintf("redislock: %s: %s\n", get_class($e), $e->getMessage()));
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
        if (isset($flags['servers-file'])) {
            if ($servers !== null) {
                throw new \ValueError('--servers and --servers-file are two sources of servers: give one');
            }
            $servers = self::lines(self::readFile((string) $flags['servers-file'], 64 * 1024), '--servers-file');
        } elseif ($servers === null && $this->target === null && ($env = getenv(self::SERVERS_ENV)) !== false && trim($env) !== '') {
            // (A framework's command looks at the application's locks: its
            // configuration, prefix included, decides there.)
            $servers = preg_split('/[\s,]+/', trim($env)) ?: [];
        }
        $options = array_filter([
            'prefix' => $flags['prefix'] ?? null,
            'cluster' => isset($flags['cluster']) ? true : null,
            'sentinel' => $flags['sentinel'] ?? null,
        ], static fn ($v) => $v !== null);
        if (isset($options['cluster'], $options['sentinel'])) {
            throw new \ValueError('--cluster and --sentinel are two topologies: give one');
        }
        if (($servers === null || $servers === []) && $options === []) {
            return $this->target ?? new ServerTarget();
        }
        $servers = is_array($servers) && count($servers) === 1 ? $servers[0] : ($servers ?: null);
        return new ServerTarget($servers, $options);
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
        $known = ['servers' => 'list', 'servers-file' => 'value', 'prefix' => 'value', 'json' => 'switch',
            'force' => 'switch', 'interval' => 'value', 'count' => 'value', 'help' => 'switch',
            'url' => 'value', 'url-file' => 'value', 'file' => 'value', 'svg' => 'optional', 'timeout' => 'value',
            'cluster' => 'switch', 'sentinel' => 'value'];
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
        if (!in_array($command, ['inspect', 'release', 'watch', 'metrics', 'doctor'], true)) {
            throw new \InvalidArgumentException(sprintf('unknown command "%s"', $command));
        }
        if (match ($command) { 'metrics' => $words !== [], 'doctor' => count($words) > 1, default => count($words) !== 1 }) {
            throw new \InvalidArgumentException(match ($command) {
                'metrics' => sprintf('metrics takes no lock name ("%s"); its source is --url or --file', $words[0]),
                'doctor' => 'doctor takes at most one lock name',
                default => sprintf('%s takes one lock name', $command),
            });
        }
        $allowed = [
            'inspect' => ['servers', 'servers-file', 'prefix', 'cluster', 'sentinel', 'json'],
            'release' => ['servers', 'servers-file', 'prefix', 'cluster', 'sentinel', 'force'],
            'watch' => ['servers', 'servers-file', 'prefix', 'cluster', 'sentinel', 'interval', 'count'],
            'doctor' => ['servers', 'servers-file', 'prefix', 'cluster', 'sentinel', 'json'],
            'metrics' => ['url', 'url-file', 'file', 'svg', 'timeout'],
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
        if (isset($flags['url-file'])) {
            if ($url !== null) {
                throw new \ValueError('--url and --url-file are two sources of the URL: give one');
            }
            $url = self::lines(self::readFile((string) $flags['url-file'], 64 * 1024), '--url-file')[0];
        } elseif ($url === null && $file === null && ($env = getenv(self::URL_ENV)) !== false && trim($env) !== '') {
            $url = trim($env);
        }
        if ($url !== null && $file !== null) {
            throw new \ValueError('--url and --file are two sources of metrics: give one');
        }
        $timeout = $flags['timeout'] ?? self::URL_TIMEOUT;
        if (!is_numeric($timeout) || (float) $timeout <= 0 || (float) $timeout > 300) {
            throw new \ValueError('--timeout must be a number of seconds above 0, at most 300');
        }
        if ($url === null && isset($flags['timeout'])) {
            throw new \ValueError('--timeout bounds the answer of a route: it goes with --url');
        }
        if ($url !== null) {
            [$text, $source] = [self::fetch((string) $url, (float) $timeout), self::shownUrl((string) $url)];
        } elseif ($file !== null) {
            [$text, $source] = [$this->read((string) $file), $file === '-' ? 'standard input' : (string) $file];
        } else {
            $text = Metrics::exposition();
            $source = 'the command line process itself';
            fwrite($this->err, "redislock: these are this command's own figures (a command line process counts only itself);\n"
                . "           a PHP-FPM pool's: --url=https://HOST/redislock/metrics (its metrics route)\n");
        }
        try {
            $exposition = Exposition::parse($text);
        } catch (\UnexpectedValueException $e) {
            throw new \RuntimeException(sprintf('%s: %s', $source, self::printable($e->getMessage())), 0, $e);
        }
        if ($exposition->samples('redislock_acquires_total') === []) {
            throw new \RuntimeException(sprintf('%s holds no redislock figures (no redislock_acquires_total sample)%s', $source,
                $url !== null ? ': is it the route of RedisLock::metrics()?' : ''));
        }
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
     * user and password as basic authentication), at most
     * {@see self::MAX_BYTES}, within $timeout seconds in all.
     *
     * @throws \ValueError when the URL is not http(s), or ambiguous
     * @throws \RuntimeException when there is no answer (in time), too much, or not a 200
     */
    private static function fetch(#[\SensitiveParameter] string $url, float $timeout): string
    {
        $scheme = strtolower((string) parse_url($url, PHP_URL_SCHEME));
        if (!in_array($scheme, ['http', 'https'], true) || parse_url($url, PHP_URL_HOST) === null) {
            throw new \ValueError('--url takes the http:// or https:// URL of a metrics route (a saved exposition: --file=PATH)');
        }
        // An "@" after the host's end: a password holding "/", "?" or "#"
        // not URL-encoded. The URL cannot be read as meant, nor shown.
        $afterScheme = substr($url, strpos($url, '://') + 3);
        $authorityEnd = strcspn($afterScheme, '/?#');
        if (str_contains(substr($afterScheme, $authorityEnd), '@')) {
            throw new \ValueError('--url has an "@" after its host: a user or password with "/", "?" or "#" must be URL-encoded (%2F, %3F, %23)');
        }
        $started = hrtime(true);
        $context = stream_context_create(['http' => [
            'method' => 'GET',
            'timeout' => $timeout,
            'ignore_errors' => true,
            'header' => "Accept: text/plain;version=0.0.4, */*;q=0.1\r\n",
            'user_agent' => 'redislock-cli',
        ]]);
        $shown = self::shownUrl($url);
        // The wrapper's warnings show the URL, its password included.
        set_error_handler(static fn (): bool => true);
        try {
            $stream = fopen($url, 'r', false, $context);
            if ($stream === false) {
                throw new \RuntimeException(sprintf('no answer from %s (refused, unreachable or over %s s)', $shown, $timeout));
            }
            $headers = stream_get_meta_data($stream)['wrapper_data'] ?? [];
            $body = '';
            while (!feof($stream)) {
                $left = $timeout - (hrtime(true) - $started) / 1e9;
                if ($left <= 0) {
                    throw new \RuntimeException(sprintf('%s did not finish its answer within %s s', $shown, $timeout));
                }
                stream_set_timeout($stream, (int) $left, (int) (fmod($left, 1.0) * 1e6));
                $chunk = fread($stream, 65536);
                if ($chunk === false || ($chunk === '' && (stream_get_meta_data($stream)['timed_out'] ?? false))) {
                    throw new \RuntimeException(sprintf('%s did not finish its answer within %s s', $shown, $timeout));
                }
                $body .= $chunk;
                if (strlen($body) > self::MAX_BYTES) {
                    throw new \RuntimeException(sprintf('%s answered more than %d MiB: not read further', $shown, self::MAX_BYTES >> 20));
                }
            }
        } finally {
            if (isset($stream) && is_resource($stream)) {
                fclose($stream);
            }
            restore_error_handler();
        }
        $status = 0;
        foreach (is_array($headers) ? $headers : [] as $header) {
            if (is_string($header) && preg_match('#^HTTP/\S+\s+(\d{3})#', $header, $m)) {
                $status = (int) $m[1];  // the last one, after redirects
            }
        }
        if ($status !== 200) {
            $first = self::remoteText(trim(strtok(ltrim($body), "\n") ?: ''), $url);
            throw new \RuntimeException(sprintf('%s answered HTTP %d%s', $shown, $status, $first === '' ? '' : ': ' . $first));
        }
        return $body;
    }

    /**
     * A line a remote server wrote, as a message may show it: printable
     * text only (no escape sequence reaches the terminal), at most 200
     * characters, and none of the URL's query, user or password (a page
     * that repeats the request brings them back).
     */
    private static function remoteText(string $line, #[\SensitiveParameter] string $url): string
    {
        $parts = parse_url($url) ?: [];
        foreach (['query', 'user', 'pass', 'fragment'] as $part) {
            $value = (string) ($parts[$part] ?? '');
            foreach (array_unique([$value, rawurldecode($value), urldecode($value)]) as $secret) {
                if (strlen($secret) >= 3) {
                    $line = str_replace($secret, '***', $line);
                }
            }
        }
        $line = self::printable($line);
        if (preg_match('/^.{200}/su', $line) === 1) {
            preg_match('/^.{197}/su', $line, $m);
            $line = $m[0] . '...';
        }

        return $line;
    }

    /**
     * $text without control characters (C0, DEL, C1); text that is not
     * UTF-8 keeps its ASCII, other bytes as `?` (no extension needed).
     */
    private static function printable(string $text): string
    {
        if (preg_match('//u', $text) !== 1) {
            $text = preg_replace('/[\x80-\xFF]/', '?', $text) ?? '';
        }

        return preg_replace('/[\x{00}-\x{1F}\x{7F}-\x{9F}]/u', '', $text) ?? '';
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
        if ($file !== '-') {
            return self::readFile($file, self::MAX_BYTES);
        }
        $text = stream_get_contents($this->in ?? (defined('STDIN') ? STDIN : fopen('php://stdin', 'r')), self::MAX_BYTES + 1);
        if ($text === false) {
            throw new \RuntimeException('cannot read standard input');
        }
        if (strlen($text) > self::MAX_BYTES) {
            throw new \RuntimeException(sprintf('standard input holds more than %d MiB: not read further', self::MAX_BYTES >> 20));
        }
        return $text;
    }

    /**
     * A file's content, at most $max bytes.
     *
     * @throws \RuntimeException when it cannot be read, or is longer
     */
    private static function readFile(string $file, int $max): string
    {
        $stream = is_file($file) && is_readable($file) ? @fopen($file, 'r') : false;
        $text = $stream === false ? false : stream_get_contents($stream, $max + 1);
        if ($stream !== false) {
            fclose($stream);
        }
        if ($text === false) {
            throw new \RuntimeException(sprintf('cannot read %s', $file));
        }
        if (strlen($text) > $max) {
            throw new \RuntimeException(sprintf('%s holds more than %d bytes: not read further', $file, $max));
        }
        return $text;
    }

    /**
     * The non-empty lines of a file of URLs (or one URL).
     *
     * @return non-empty-list<string>
     * @throws \ValueError when there is none
     */
    private static function lines(#[\SensitiveParameter] string $text, string $flag): array
    {
        $lines = array_values(array_filter(array_map('trim', preg_split('/\r?\n/', $text) ?: []), static fn (string $l) => $l !== ''));
        if ($lines === []) {
            throw new \ValueError(sprintf('%s names a file with no URL in it', $flag));
        }
        return $lines;
    }

    private function inspect(string $name, Target $target, bool $json): int
    {
        $seen = $target->inspect($name);
        // Owner tokens are bytes (option owner takes any): those that are
        // not UTF-8 are shown with U+FFFD, as the text form does.
        fwrite($this->out, $json
            ? json_encode($seen, JSON_PRETTY_PRINT | JSON_UNESCAPED_SLASHES | JSON_INVALID_UTF8_SUBSTITUTE | JSON_THROW_ON_ERROR) . "\n"
            : Describe::inspection($name, $seen));
        return 0;
    }

    /** `doctor`: the checkup of every server under the lock $name. */
    private function doctor(string $name, Target $target, bool $json): int
    {
        $nodes = $target->diagnose($name);
        fwrite($this->out, $json
            ? json_encode($nodes, JSON_PRETTY_PRINT | JSON_UNESCAPED_SLASHES | JSON_INVALID_UTF8_SUBSTITUTE | JSON_THROW_ON_ERROR) . "\n"
            : Doctor::report($name, $nodes));
        return Doctor::status($nodes);
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

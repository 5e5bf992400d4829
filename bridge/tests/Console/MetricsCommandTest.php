<?php

declare(strict_types=1);

namespace RedisLock\Bridge\Tests\Console;

use PHPUnit\Framework\TestCase;
use RedisLock\Bridge\Metrics;

/**
 * `bridge/bin/redislock metrics` run as a user would, in a PHP process of
 * its own: a saved exposition (--file, and - for standard input) printed
 * or drawn (--svg, --svg=FILE), a pool's from a metrics route over HTTP
 * (--url, against `php -S` serving the fixture behind basic
 * authentication; errors without the password), this process's own, and
 * bad usage.
 */
final class MetricsCommandTest extends TestCase
{
    private const USER = 'prometheus';
    private const PASSWORD = 'scrape-s3cret';

    /** @var resource|null the `php -S` of the --url tests */
    private $server = null;

    private ?int $port = null;

    /** @var list<string> files to remove */
    private array $files = [];

    protected function tearDown(): void
    {
        if ($this->server !== null) {
            proc_terminate($this->server);
            proc_close($this->server);
            $this->server = null;
        }
        foreach ($this->files as $file) {
            @unlink($file);
        }
        $this->files = [];
    }

    /**
     * Runs the command line; returns [exit status, stdout, stderr].
     *
     * @param  list<string>  $args
     * @return array{0: int, 1: string, 2: string}
     */
    private static function cli(array $args, string $stdin = '', array $env = []): array
    {
        $so = getenv('REDISLOCK_SO') ?: redislock_extension_path();
        $cmd = array_merge([PHP_BINARY, '-n', '-d', 'extension=' . $so, dirname(__DIR__, 2) . '/bin/redislock'], $args);
        $proc = proc_open($cmd, [0 => ['pipe', 'r'], 1 => ['pipe', 'w'], 2 => ['pipe', 'w']], $pipes, null, $env === [] ? null : $env + getenv());
        fwrite($pipes[0], $stdin);
        fclose($pipes[0]);
        $out = stream_get_contents($pipes[1]);
        $err = stream_get_contents($pipes[2]);
        fclose($pipes[1]);
        fclose($pipes[2]);

        return [proc_close($proc), (string) $out, (string) $err];
    }

    private function tempFile(): string
    {
        return $this->files[] = tempnam(sys_get_temp_dir(), 'redislock-metrics-');
    }

    /** The number of wait-histogram bars in an SVG (well-formed, or the test fails). */
    private function bars(string $svg): int
    {
        $xml = simplexml_load_string($svg);
        $this->assertInstanceOf(\SimpleXMLElement::class, $xml, 'well-formed SVG');
        $xml->registerXPathNamespace('s', 'http://www.w3.org/2000/svg');

        return count($xml->xpath('//s:rect[@class="bar"]'));
    }

    public function testAFileIsPrintedAsItIs(): void
    {
        [$status, $out, $err] = self::cli(['metrics', '--file=' . ExpositionTest::FIXTURE]);
        $this->assertSame(0, $status, $err);
        $this->assertSame(file_get_contents(ExpositionTest::FIXTURE), $out);
        $this->assertSame('', $err);
    }

    public function testAFileIsDrawnToTheOutputOrToAFile(): void
    {
        [$status, $out, $err] = self::cli(['metrics', '--file=' . ExpositionTest::FIXTURE, '--svg']);
        $this->assertSame(0, $status, $err);
        $this->assertSame(36, $this->bars($out), 'lock and permit, 18 buckets each');

        $file = $this->tempFile();
        [$status, $out, $err] = self::cli(['metrics', '--file=-', "--svg=$file"], (string) file_get_contents(ExpositionTest::FIXTURE));
        $this->assertSame(0, $status, $err);
        $this->assertSame("wrote $file: wait histograms of lock (1,240 acquires), permit (57 acquires)\n", $out);
        $this->assertSame(36, $this->bars((string) file_get_contents($file)));
        $this->assertStringContainsString('standard input; successful acquires', (string) file_get_contents($file));
    }

    public function testAMalformedOrMissingFileIsAnError(): void
    {
        [$status, $out, $err] = self::cli(['metrics', '--file=-', '--svg'], "redislock_x{a=\"1\" 2\n");
        $this->assertSame(1, $status);
        $this->assertSame('', $out);
        $this->assertSame("redislock: standard input: line 1 of the exposition: malformed labels of redislock_x: \"redislock_x{a=\"1\" 2\"\n", $err);

        [$status, , $err] = self::cli(['metrics', '--file=/nonexistent/metrics.txt']);
        $this->assertSame(1, $status);
        $this->assertSame("redislock: cannot read /nonexistent/metrics.txt\n", $err);
    }

    /** Starts `php -S` serving /metrics (the fixture, behind basic authentication) and /gone (404). */
    private function startRoute(): string
    {
        $dir = sys_get_temp_dir() . '/redislock-route-' . getmypid() . '-' . bin2hex(random_bytes(3));
        mkdir($dir);
        $router = "$dir/router.php";
        file_put_contents($router, '<?php
            $path = parse_url($_SERVER["REQUEST_URI"], PHP_URL_PATH);
            if ($path === "/endless") { header("Content-Type: text/plain"); while (true) { echo str_repeat("# filler\n", 8192); flush(); } }
            if ($path === "/slow") { header("Content-Type: text/plain"); while (true) { echo "# a line\n"; flush(); usleep(400000); } }
            if ($path === "/foreign") { header("Content-Type: text/plain"); echo "# TYPE up gauge\nup 1\n"; return true; }
            if ($path === "/empty") { return true; }
            if ($path === "/echo") { http_response_code(404); echo "\x1b]0;pwned\x07\x1b[31mNot found: " . $_SERVER["REQUEST_URI"] . "\x1b[0m\n"; return true; }
            if ($path !== "/metrics") { http_response_code(404); echo "no such route\n"; return true; }
            if (($_SERVER["PHP_AUTH_USER"] ?? null) !== ' . var_export(self::USER, true) . ' || ($_SERVER["PHP_AUTH_PW"] ?? null) !== ' . var_export(self::PASSWORD, true) . ') {
                http_response_code(401); header("WWW-Authenticate: Basic realm=\"metrics\""); echo "who are you?\n"; return true;
            }
            header("Content-Type: text/plain; version=0.0.4; charset=utf-8");
            readfile(' . var_export(ExpositionTest::FIXTURE, true) . ');
            return true;');
        $this->files[] = $router;
        $probe = stream_socket_server('tcp://127.0.0.1:0');
        $this->port = (int) substr((string) stream_socket_get_name($probe, false), strlen('127.0.0.1:'));
        fclose($probe);
        $this->server = proc_open([PHP_BINARY, '-n', '-S', "127.0.0.1:{$this->port}", $router],
            [0 => ['file', '/dev/null', 'r'], 1 => ['file', '/dev/null', 'w'], 2 => ['file', '/dev/null', 'w']], $pipes);
        $deadline = microtime(true) + 5.0;
        while (!($c = @stream_socket_client("tcp://127.0.0.1:{$this->port}", $errno, $error, 0.2))) {
            $this->assertLessThan($deadline, microtime(true), 'php -S did not start');
            usleep(20_000);
        }
        fclose($c);
        register_shutdown_function(static fn () => @rmdir($dir));

        return "http://127.0.0.1:{$this->port}";
    }

    public function testAUrlIsFetchedWithItsCredentials(): void
    {
        $base = $this->startRoute();
        $url = sprintf('http://%s:%s@127.0.0.1:%d/metrics', self::USER, self::PASSWORD, $this->port);
        [$status, $out, $err] = self::cli(['metrics', "--url=$url"]);
        $this->assertSame(0, $status, $err);
        $this->assertSame(file_get_contents(ExpositionTest::FIXTURE), $out);

        [$status, $out, $err] = self::cli(['metrics', "--url=$url?token=q-s3cret", '--svg']);
        $this->assertSame(0, $status, $err);
        $this->assertSame(36, $this->bars($out));
        $this->assertStringContainsString("http://127.0.0.1:{$this->port}/metrics; successful acquires", $out, 'the source, without credentials');
        $this->assertStringNotContainsString(self::PASSWORD, $out);
        $this->assertStringNotContainsString('q-s3cret', $out);

        foreach ([
            ["$base/metrics", "redislock: http://127.0.0.1:{$this->port}/metrics answered HTTP 401: who are you?\n"],
            [sprintf('http://%s:%s@127.0.0.1:%d/gone?token=q-s3cret', self::USER, self::PASSWORD, $this->port),
                "redislock: http://127.0.0.1:{$this->port}/gone answered HTTP 404: no such route\n"],
        ] as [$bad, $message]) {
            [$status, $out, $err] = self::cli(['metrics', "--url=$bad"]);
            $this->assertSame(1, $status);
            $this->assertSame('', $out);
            $this->assertSame($message, $err);
        }
    }

    /**
     * What a route sends is bounded: in bytes (16 MiB) and in total time
     * (--timeout): at da6b638 an endless body grew the process without
     * bound, and a line every 4 s kept it reading (the timeout was per
     * read).
     */
    public function testARouteIsReadWithinBytesAndTime(): void
    {
        $base = $this->startRoute();
        $started = microtime(true);
        [$status, $out, $err] = self::cli(['metrics', "--url=$base/endless"]);
        $this->assertSame(1, $status);
        $this->assertSame('', $out);
        $this->assertSame("redislock: http://127.0.0.1:{$this->port}/endless answered more than 16 MiB: not read further\n", $err);

        $started = microtime(true);
        [$status, , $err] = self::cli(['metrics', "--url=$base/slow", '--timeout=1']);
        $took = microtime(true) - $started;
        $this->assertSame(1, $status);
        $this->assertSame("redislock: http://127.0.0.1:{$this->port}/slow did not finish its answer within 1 s\n", $err);
        $this->assertLessThan(5.0, $took, 'bounded by --timeout in all');

        [$status, , $err] = self::cli(['metrics', '--file=-', '--timeout=1'], '');
        $this->assertSame(2, $status);
        $this->assertStringContainsString('--timeout bounds the answer of a route: it goes with --url', $err);
    }

    /**
     * An answer without redislock's figures (empty, another program's) is
     * an error, not "no acquire counted yet" (at da6b638: exit 0); one
     * that is not an exposition at all names its line.
     */
    public function testAForeignAnswerIsAnError(): void
    {
        $base = $this->startRoute();
        foreach (['foreign', 'empty'] as $path) {
            [$status, $out, $err] = self::cli(['metrics', "--url=$base/$path", '--svg']);
            $this->assertSame(1, $status, $path);
            $this->assertSame('', $out);
            $this->assertSame("redislock: http://127.0.0.1:{$this->port}/$path holds no redislock figures (no redislock_acquires_total sample): is it the route of RedisLock::metrics()?\n", $err);
        }
        [$status, , $err] = self::cli(['metrics', '--file=-'], "hello\n");
        $this->assertSame(1, $status);
        $this->assertSame("redislock: standard input: line 1 of the exposition: malformed value of hello: \"hello\"\n", $err);
    }

    /**
     * A route's own words reach the terminal without control characters
     * (no escape sequence, no title change) and without the URL's query,
     * user or password, even when the page repeats the request (at
     * da6b638 both came back raw).
     */
    public function testARoutesWordsAreShownSafe(): void
    {
        $this->startRoute();
        $url = sprintf('http://%s:%s@127.0.0.1:%d/echo?token=q-s3cret&x=1', self::USER, self::PASSWORD, $this->port);
        [$status, , $err] = self::cli(['metrics', "--url=$url"]);
        $this->assertSame(1, $status);
        $this->assertSame("redislock: http://127.0.0.1:{$this->port}/echo answered HTTP 404: ]0;pwned[31mNot found: /echo?***[0m\n", $err);
        $this->assertDoesNotMatchRegularExpression('/[\x00-\x08\x0b-\x1f\x7f]/', $err);
        $this->assertStringNotContainsString('q-s3cret', $err);
    }

    /**
     * A password can stay out of `ps`: the URL from a file (--url-file) or
     * from REDISLOCK_METRICS_URL; and a password holding an unencoded "/"
     * is refused without being shown (at da6b638 it was shown whole).
     */
    public function testSecretsFromAFileOrTheEnvironmentAndNeverShown(): void
    {
        $this->startRoute();
        $url = sprintf('http://%s:%s@127.0.0.1:%d/metrics', self::USER, self::PASSWORD, $this->port);
        $file = $this->tempFile();
        file_put_contents($file, "\n$url\n");
        [$status, $out, $err] = self::cli(['metrics', "--url-file=$file"]);
        $this->assertSame(0, $status, $err);
        $this->assertSame(file_get_contents(ExpositionTest::FIXTURE), $out);

        [$status, $out, $err] = self::cli(['metrics'], '', ['REDISLOCK_METRICS_URL' => $url]);
        $this->assertSame(0, $status, $err);
        $this->assertSame(file_get_contents(ExpositionTest::FIXTURE), $out);

        [$status, $out, $err] = self::cli(['metrics', '--url=http://prom:12/SECRETA@127.0.0.1:1/m']);
        $this->assertSame(2, $status);
        $this->assertStringContainsString('has an "@" after its host', $err);
        $this->assertStringNotContainsString('SECRETA', $out . $err);

        [$status, , $err] = self::cli(['metrics', "--url-file=$file", "--url=$url"]);
        $this->assertSame(2, $status);
        $this->assertStringNotContainsString(self::PASSWORD, $err);
    }

    public function testAnUnreachableUrlIsAnErrorWithoutThePassword(): void
    {
        [$status, $out, $err] = self::cli(['metrics', '--url=http://u:' . self::PASSWORD . '@127.0.0.1:1/metrics']);
        $this->assertSame(1, $status);
        $this->assertStringStartsWith('redislock: no answer from http://127.0.0.1:1/metrics (refused', $err);
        $this->assertStringNotContainsString(self::PASSWORD, $out . $err);
    }

    public function testWithoutASourceItIsThisProcesssOwn(): void
    {
        [$status, $out, $err] = self::cli(['metrics']);
        $this->assertSame(0, $status, $err);
        $this->assertStringContainsString("# TYPE redislock_wait_seconds histogram\n", $out);
        $this->assertStringContainsString("this command's own figures", $err);
        $this->assertStringContainsString('--url=', $err);
        [$status, $out] = self::cli(['metrics', '--svg']);
        $this->assertSame(0, $status);
        $this->assertSame(0, $this->bars($out), 'a fresh process has waited for nothing');
    }

    public function testBadUsageIsRefused(): void
    {
        foreach ([
            [['metrics', 'orders'], 'metrics takes no lock name ("orders")'],
            [['metrics', '--url=http://x/', '--file=-'], '--url and --file are two sources of metrics: give one'],
            [['metrics', '--servers=redis://127.0.0.1'], '--servers is not an option of metrics'],
            [['metrics', '--svg='], '--svg=... needs a value (or --svg alone)'],
            [['metrics', '--url=file:///etc/passwd'], '--url takes the http:// or https:// URL of a metrics route'],
            [['inspect', 'x', '--svg'], '--svg is not an option of inspect'],
        ] as [$args, $message]) {
            [$status, , $err] = self::cli($args);
            $this->assertSame(2, $status, implode(' ', $args));
            $this->assertStringContainsString($message, $err, implode(' ', $args));
        }
    }
}

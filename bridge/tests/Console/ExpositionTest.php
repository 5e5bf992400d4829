<?php

declare(strict_types=1);

namespace RedisLock\Bridge\Tests\Console;

use PHPUnit\Framework\TestCase;
use RedisLock\Bridge\Console\Exposition;
use RedisLock\Bridge\Metrics;

/**
 * Exposition reads Prometheus's text format: the fixture (a sample of
 * RedisLock::metrics(), accepted by `promtool check metrics`), label
 * escapes, timestamps, malformed lines; histograms by primitive and
 * their quantiles as PromQL's histogram_quantile() estimates them; and
 * the loaded extension's own metrics() when it has them.
 */
final class ExpositionTest extends TestCase
{
    public const FIXTURE = __DIR__ . '/fixtures/metrics.txt';

    private static function fixture(): Exposition
    {
        return Exposition::parse((string) file_get_contents(self::FIXTURE));
    }

    public function testTheFixtureIsRead(): void
    {
        $e = self::fixture();
        $this->assertCount(1 + 12 + 3 + 3 + 1 + 3 * 20 + 3, $e->samples());
        $this->assertSame('counter', $e->type('redislock_acquires_total'));
        $this->assertSame('histogram', $e->type('redislock_wait_seconds'));
        $this->assertNull($e->type('redislock_nothing'));
        $this->assertSame('Acquire calls by primitive and result.', $e->help('redislock_acquires_total'));
        $this->assertSame(17.0, $e->value('redislock_acquires_total', ['primitive' => 'lock', 'result' => 'timeout']));
        $this->assertSame(1.0, $e->value('redislock_acquires_total', ['primitive' => 'permit', 'result' => 'error']));
        $this->assertNull($e->value('redislock_acquires_total', ['primitive' => 'mutex']));
        $this->assertSame(2.0, $e->value('redislock_reconnects_total'), 'a sample with a timestamp');
        $this->assertSame(['version' => '0.1.0', 'scope' => 'pool'], $e->samples('redislock_info')[0]['labels']);
    }

    /** The fixture is an exposition Prometheus accepts (Debian's prometheus package has promtool). */
    public function testPromtoolAcceptsTheFixture(): void
    {
        $promtool = trim((string) shell_exec('command -v promtool'));
        if ($promtool === '') {
            $this->markTestSkipped('promtool is not installed (apt-get install prometheus)');
        }
        exec(escapeshellarg($promtool) . ' check metrics < ' . escapeshellarg(self::FIXTURE) . ' 2>&1', $output, $status);
        $this->assertSame(0, $status, implode("\n", $output));
    }

    public function testLabelValuesAreUnescaped(): void
    {
        $names = array_map(
            static fn (array $s) => [$s['labels']['name'], $s['value']],
            self::fixture()->samples('redislock_name_wait_seconds_total'),
        );
        $this->assertSame([['orders:"42"', 12.5], ["report\\daily\nweekly", 3.25], ['imports', 0.275]], $names);
    }

    public function testHistogramsByPrimitive(): void
    {
        $histograms = self::fixture()->histograms('redislock_wait_seconds');
        $this->assertSame(['lock', 'read', 'permit'], array_keys($histograms));
        $lock = $histograms['lock'];
        $this->assertCount(18, $lock['buckets']);
        $this->assertSame(['le' => 0.0001, 'count' => 310.0], $lock['buckets'][0]);
        $this->assertSame(['le' => INF, 'count' => 1240.0], $lock['buckets'][17]);
        $this->assertSame(41.87, $lock['sum']);
        $this->assertSame(1240.0, $lock['count']);
        $this->assertSame(0.0, $histograms['read']['count']);
        $this->assertSame([], self::fixture()->histograms('redislock_no_such_family'));
    }

    public function testQuantilesAreHistogramQuantiles(): void
    {
        $buckets = self::fixture()->histograms('redislock_wait_seconds')['lock']['buckets'];
        // rank 620 of 1240 in (0.0001, 0.00025] holding 310..702.
        $this->assertEqualsWithDelta(0.0001 + 0.00015 * (620 - 310) / (702 - 310), Exposition::quantile(0.5, $buckets), 1e-12);
        // rank 1227.6 in (0.1, 0.25] holding 1215..1228.
        $this->assertEqualsWithDelta(0.1 + 0.15 * (1227.6 - 1215) / (1228 - 1215), Exposition::quantile(0.99, $buckets), 1e-12);
        $this->assertEqualsWithDelta(0.0001 * (0.125 * 1240) / 310, Exposition::quantile(0.125, $buckets), 1e-12, 'from 0 in the first bucket');
        $this->assertEqualsWithDelta(2.5 + 2.5 * (1239.38 - 1239), Exposition::quantile(0.9995, $buckets), 1e-9);
        $this->assertSame(5.0, Exposition::quantile(1.0, $buckets), 'the bound of the last bucket that has observations');
        // Past the last finite bound: that bound, as Prometheus answers.
        $over = [['le' => 1.0, 'count' => 1.0], ['le' => INF, 'count' => 4.0]];
        $this->assertSame(1.0, Exposition::quantile(0.99, $over));
        $this->assertNull(Exposition::quantile(0.5, self::fixture()->histograms('redislock_wait_seconds')['read']['buckets']));
        $this->assertNull(Exposition::quantile(0.5, []));
    }

    public function testMalformedLinesAreRefusedWithTheirNumber(): void
    {
        foreach ([
            "ok 1\nbroken{a=\"b\" 1\n" => 'line 2 of the exposition: malformed labels of broken',
            "x 1 2 3\n" => 'line 1 of the exposition: malformed value of x',
            "x twelve\n" => 'line 1 of the exposition: "twelve" is not a number',
            "# TYPE x countr\n" => 'line 1 of the exposition: unknown type "countr" of x',
            "9x 1\n" => 'line 1 of the exposition: not a sample',
            "x{a=\"b\"}\n" => 'line 1 of the exposition: malformed value of x',
            // A histogram's bucket without its bound, or with one that is
            // no number: named by its line (at da6b638 by nothing).
            "ok 1\nh_bucket{primitive=\"lock\"} 1\n" => 'line 2 of the exposition: a bucket of h has no "le" label',
            "ok 1\nok 2\nh_bucket{le=\"abc\"} 1\n" => 'line 3 of the exposition: "abc" is not a number',
        ] as $text => $message) {
            try {
                Exposition::parse($text);
                $this->fail('read ' . json_encode($text));
            } catch (\UnexpectedValueException $e) {
                $this->assertStringStartsWith($message, $e->getMessage());
            }
        }
        $e = Exposition::parse("# a comment\n\nx{a=\"1\",b=\"2\",} +Inf\r\ny NaN\nz -Inf 123\n");
        $this->assertSame(INF, $e->value('x', ['b' => '2']));
        $this->assertNan((float) $e->value('y'));
        $this->assertSame(-INF, $e->value('z'));
    }

    /** A label value of any length is read (at da6b638 one over ~10-16 KB was "malformed": PCRE's backtracking limit). */
    public function testALongLabelValueIsRead(): void
    {
        $long = str_repeat('n', 100_000) . '\\"' . str_repeat('m', 50_000);
        $e = Exposition::parse("x{name=\"$long\"} 3\n");
        $this->assertSame(3.0, $e->value('x'));
        $this->assertSame(150_001, strlen($e->samples('x')[0]['labels']['name']));
    }

    public function testTheExtensionsOwnMetricsAreRead(): void
    {
        $this->assertTrue(Metrics::available(), 'the loaded extension has RedisLock::metrics()');
        $lock = new \RedisLock(redislock_test_key('exposition'), 10.0, bridge_test_server()->url());
        $this->assertTrue($lock->acquire());
        $lock->release();
        $e = Exposition::parse(Metrics::exposition());
        $this->assertSame('histogram', $e->type('redislock_wait_seconds'));
        $histograms = $e->histograms('redislock_wait_seconds');
        $this->assertSame(['lock', 'read', 'permit'], array_keys($histograms));
        foreach ($histograms as $histogram) {
            $this->assertCount(18, $histogram['buckets']);
            $this->assertSame(INF, $histogram['buckets'][17]['le']);
            $this->assertSame($histogram['count'], $histogram['buckets'][17]['count']);
        }
        $this->assertGreaterThanOrEqual(1.0, $histograms['lock']['count']);
        $this->assertGreaterThanOrEqual(1.0, $e->value('redislock_acquires_total', ['primitive' => 'lock', 'result' => 'acquired']));
    }

    public function testWithoutTheExtensionTheRouteAnswers501(): void
    {
        // A PHP process of its own without the extension (-n: no ini, so
        // no extension= line): what the bridges' metrics routes answer.
        $code = 'require ' . var_export(dirname(__DIR__, 2) . '/autoload.php', true) . ';'
            . 'echo json_encode([\RedisLock\Bridge\Metrics::available(), \RedisLock\Bridge\Metrics::response()]);';
        $proc = proc_open([PHP_BINARY, '-n', '-r', $code], [1 => ['pipe', 'w'], 2 => ['pipe', 'w']], $pipes);
        $out = stream_get_contents($pipes[1]);
        $err = stream_get_contents($pipes[2]);
        fclose($pipes[1]);
        fclose($pipes[2]);
        $this->assertSame(0, proc_close($proc), $err);
        [$available, [$body, $status, $headers]] = json_decode((string) $out, true, 512, JSON_THROW_ON_ERROR);
        $this->assertFalse($available);
        $this->assertSame(501, $status);
        $this->assertSame('text/plain; charset=utf-8', $headers['Content-Type']);
        $this->assertSame('no-store', $headers['Cache-Control']);
        $this->assertStringStartsWith('redislock: the loaded redislock extension (not loaded) has no RedisLock::metrics()', $body);

        // With it loaded: 200 and the exposition.
        $this->assertTrue(Metrics::available());
        [$body, $status, $headers] = Metrics::response();
        $this->assertSame(200, $status);
        $this->assertSame(Metrics::CONTENT_TYPE, $headers['Content-Type']);
        $this->assertStringContainsString('redislock_acquires_total', $body);
    }
}

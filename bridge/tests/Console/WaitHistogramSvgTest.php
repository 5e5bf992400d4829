<?php

declare(strict_types=1);

namespace RedisLock\Bridge\Tests\Console;

use PHPUnit\Framework\TestCase;
use RedisLock\Bridge\Console\Exposition;
use RedisLock\Bridge\Console\WaitHistogramSvg;

/**
 * The SVG of the fixture's wait histograms is well-formed XML (read back
 * with SimpleXML), with a chart per primitive that counted acquires (lock
 * and permit, not read), a bar per bucket as tall as the acquires in it,
 * bucket labels, axis titles, and the count, p50 and p99 in its title.
 */
final class WaitHistogramSvgTest extends TestCase
{
    private static function svg(string $text, string $source = 'fixture'): \SimpleXMLElement
    {
        $svg = WaitHistogramSvg::render(Exposition::parse($text), $source);
        $xml = simplexml_load_string($svg);
        self::assertInstanceOf(\SimpleXMLElement::class, $xml, 'well-formed XML');
        $xml->registerXPathNamespace('s', 'http://www.w3.org/2000/svg');

        return $xml;
    }

    public function testAChartPerPrimitiveWithAcquiresAndABarPerBucket(): void
    {
        $xml = self::svg((string) file_get_contents(ExpositionTest::FIXTURE));
        $this->assertSame('svg', $xml->getName());
        $panels = $xml->xpath('//s:g[@class="panel"]');
        $this->assertSame(['lock', 'permit'], array_map(static fn ($g) => (string) $g['data-primitive'], $panels), 'read has no acquires');
        $this->assertCount(36, $xml->xpath('//s:rect[@class="bar"]'));
        foreach ($panels as $panel) {
            $panel->registerXPathNamespace('s', 'http://www.w3.org/2000/svg');
            $this->assertCount(18, $panel->xpath('s:rect[@class="bar"]'));
            $this->assertCount(2, $panel->xpath('s:line[@class="quantile"]'), 'p50 and p99');
        }

        $lock = $panels[0];
        $lock->registerXPathNamespace('s', 'http://www.w3.org/2000/svg');
        $texts = array_map('strval', $lock->xpath('s:text'));
        $this->assertSame('lock: 1,240 acquires; p50 ≈ 219 µs, p99 ≈ 245 ms, mean 33.8 ms', $texts[0]);
        $this->assertContains('acquires', $texts, 'the y axis');
        $this->assertContains('≤ 100 µs', $texts);
        $this->assertContains('≤ 2.5 ms', $texts);
        $this->assertContains('≤ 30 s', $texts);
        $this->assertContains('> 30 s', $texts);
        $this->assertNotEmpty(array_filter($texts, static fn ($t) => str_starts_with($t, 'wait until acquired')), 'the x axis');

        // Each bar is the acquires of its bucket, not the cumulative count.
        $bars = $lock->xpath('s:rect[@class="bar"]');
        $heights = array_map(static fn ($bar) => (float) $bar['height'], $bars);
        $this->assertSame('100 µs to 250 µs: 392 acquires', (string) $bars[1]->title);
        $this->assertSame('0 s to 100 µs: 310 acquires', (string) $bars[0]->title);
        $this->assertSame('over 30 s: 0 acquires', (string) $bars[17]->title);
        $this->assertSame(1, array_keys($heights, max($heights))[0], 'the tallest bar is the 392 of (100 µs, 250 µs]');
        $this->assertEqualsWithDelta(310 / 392, $heights[0] / $heights[1], 0.01);
        $this->assertSame(0.0, $heights[17]);
    }

    /** Control characters and bytes that are not UTF-8 in a label or the source give well-formed XML (at da6b638 a \x01 did not). */
    public function testControlCharactersGiveWellFormedXml(): void
    {
        $text = "redislock_acquires_total{primitive=\"lo\x01ck\",result=\"acquired\"} 1\n"
            . "redislock_wait_seconds_bucket{primitive=\"lo\x01ck\",le=\"+Inf\"} 1\n"
            . "redislock_wait_seconds_sum{primitive=\"lo\x01ck\"} 0.1\n"
            . "redislock_wait_seconds_count{primitive=\"lo\x01ck\"} 1\n";
        $svg = WaitHistogramSvg::render(Exposition::parse($text), "source \x1b[31m \xff");
        $this->assertInstanceOf(\SimpleXMLElement::class, simplexml_load_string($svg), 'well-formed SVG');
        $this->assertStringNotContainsString("\x01", $svg);
        $this->assertStringNotContainsString("\x1b", $svg);
    }

    public function testAnExpositionWithoutAcquiresSaysSo(): void
    {
        $empty = preg_replace('/^(redislock_wait_seconds_(?:bucket|count)\{[^}]*\}) \d+$/m', '$1 0', (string) file_get_contents(ExpositionTest::FIXTURE));
        $xml = self::svg($empty, 'a <pool> & more');
        $this->assertCount(0, $xml->xpath('//s:rect[@class="bar"]'));
        $texts = array_map('strval', $xml->xpath('//s:text'));
        $this->assertContains('No acquire counted yet: every wait histogram is empty.', $texts);
        $this->assertStringStartsWith('a <pool> & more; ', $texts[1], 'escaped in the file, read back as given');
    }

    public function testDurations(): void
    {
        foreach ([[0.0001, '100 µs'], [0.00025, '250 µs'], [0.0025, '2.5 ms'], [0.1, '100 ms'], [1.0, '1 s'],
            [30.0, '30 s'], [0.000218622, '219 µs'], [0.0, '0 s'], [INF, '+Inf'], [null, 'n/a']] as [$seconds, $text]) {
            $this->assertSame($text, WaitHistogramSvg::duration($seconds));
        }
    }
}

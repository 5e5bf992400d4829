<?php

namespace RedisLock\Bridge\Tests\Console;

use PHPUnit\Framework\TestCase;

/**
 * `bridge/bin/redislock` run as a user would, in a PHP process of its own,
 * against a real redis-server: inspect of a held and a free lock (words
 * and --json), release --force, watch, and bad usage.
 */
class CliTest extends TestCase
{
    /**
     * Runs the command line; returns [exit status, stdout, stderr].
     *
     * @param  list<string>  $args
     * @return array{0: int, 1: string, 2: string}
     */
    private static function cli(array $args, array $env = []): array
    {
        $so = getenv('REDISLOCK_SO') ?: ini_get('extension');
        $cmd = array_merge([PHP_BINARY, '-n', '-d', 'extension=' . $so, dirname(__DIR__, 2) . '/bin/redislock'], $args);
        $proc = proc_open($cmd, [1 => ['pipe', 'w'], 2 => ['pipe', 'w']], $pipes, null, $env === [] ? null : $env + getenv());
        $out = stream_get_contents($pipes[1]);
        $err = stream_get_contents($pipes[2]);
        fclose($pipes[1]);
        fclose($pipes[2]);
        return [proc_close($proc), $out, $err];
    }

    private static function url(): string
    {
        return bridge_test_server()->url();
    }

    public function testInspectShowsTheHolderOfAHeldLock(): void
    {
        $name = 'cli-held-' . bin2hex(random_bytes(4));
        $lock = new \RedisLock($name, 30.0, self::url(), ['owner' => 'worker-7']);
        $this->assertTrue($lock->acquire());
        [$status, $out, $err] = self::cli(['inspect', $name, '--servers=' . self::url()]);
        $this->assertSame(0, $status, $err);
        $this->assertStringContainsString("lock \"$name\": held for writing", $out);
        $this->assertStringContainsString('owners:  worker-7', $out);
        $this->assertMatchesRegularExpression('/ttl: +(29|30)\.\d{3} s/', $out);
        $this->assertStringContainsString('waiting: 0', $out);

        [$status, $json] = self::cli(['inspect', $name, '--servers=' . self::url(), '--json']);
        $this->assertSame(0, $status);
        $seen = json_decode($json, true, 512, JSON_THROW_ON_ERROR);
        $direct = \RedisLock::inspect($name, self::url());
        $this->assertSame(['worker-7'], $seen['owners']);
        $this->assertSame('write', $seen['mode']);
        unset($seen['ttl'], $direct['ttl']);
        $this->assertSame($direct, $seen, 'the same array as RedisLock::inspect()');
        $this->assertTrue($lock->release());

        [$status, $out] = self::cli(['inspect', $name, '--servers=' . self::url()]);
        $this->assertSame(0, $status);
        $this->assertStringContainsString("lock \"$name\": free", $out);
    }

    /** A server that can lose the lock by itself is named by inspect and watch. */
    public function testInspectNamesAnUnsafeServer(): void
    {
        $server = \TestRedis::start(['--maxmemory', '64mb', '--maxmemory-policy', 'allkeys-lru', '--appendonly', 'yes']);
        [$status, $out, $err] = self::cli(['inspect', 'cli-unsafe', '--servers=' . $server->url()]);
        $this->assertSame(0, $status, $err);
        $this->assertStringContainsString(sprintf('UNSAFE server %s/0 (eviction): maxmemory 67108864 with maxmemory-policy allkeys-lru', $server->url()), $out);
        $this->assertStringContainsString('redislock doctor tells more', $out);
        [$status, $out] = self::cli(['watch', 'cli-unsafe', '--count=1', '--servers=' . $server->url()]);
        $this->assertSame(0, $status);
        $this->assertStringContainsString('free, 0 waiting (UNSAFE server: eviction)', $out);
        [, $out] = self::cli(['inspect', 'cli-unsafe', '--servers=' . self::url()]);
        $this->assertStringNotContainsString('UNSAFE', $out);
    }

    /**
     * An owner that is not UTF-8 (option owner takes any bytes) is shown
     * with U+FFFD in --json (at da6b638 an uncaught JsonException, exit
     * 255).
     */
    public function testInspectJsonShowsAnOwnerThatIsNotUtf8(): void
    {
        $name = 'cli-bytes-' . bin2hex(random_bytes(4));
        $lock = new \RedisLock($name, 30.0, self::url(), ['owner' => "\xff\xfeOWN"]);
        $this->assertTrue($lock->acquire());
        [$status, $json, $err] = self::cli(['inspect', $name, '--servers=' . self::url(), '--json']);
        $this->assertSame(0, $status, $err);
        $seen = json_decode($json, true, 512, JSON_THROW_ON_ERROR);
        $this->assertSame(["\u{FFFD}\u{FFFD}OWN"], $seen['owners']);
        $this->assertTrue($lock->release());
    }

    /** The servers from a file (--servers-file) or REDISLOCK_SERVERS: a password there stays out of ps. */
    public function testServersFromAFileOrTheEnvironment(): void
    {
        $name = 'cli-env-' . bin2hex(random_bytes(4));
        $lock = new \RedisLock($name, 30.0, self::url(), ['owner' => 'worker-9']);
        $this->assertTrue($lock->acquire());
        $file = tempnam(sys_get_temp_dir(), 'redislock-servers-');
        file_put_contents($file, self::url() . "\n");
        try {
            [$status, $out, $err] = self::cli(['inspect', $name, "--servers-file=$file"]);
            $this->assertSame(0, $status, $err);
            $this->assertStringContainsString('owners:  worker-9', $out);
            [$status, $out, $err] = self::cli(['inspect', $name], ['REDISLOCK_SERVERS' => ' ' . self::url() . ' ']);
            $this->assertSame(0, $status, $err);
            $this->assertStringContainsString('owners:  worker-9', $out);
        } finally {
            unlink($file);
            $this->assertTrue($lock->release());
        }
    }

    public function testReleaseNeedsForceAndThenDeletesWhoeverHolds(): void
    {
        $name = 'cli-release-' . bin2hex(random_bytes(4));
        $lock = new \RedisLock($name, 30.0, self::url());
        $this->assertTrue($lock->acquire());

        [$status, $out, $err] = self::cli(['release', $name, '--servers=' . self::url()]);
        $this->assertSame(2, $status);
        $this->assertStringContainsString('--force', $err);
        $this->assertTrue(\RedisLock::inspect($name, self::url())['held'], 'without --force nothing is deleted');

        [$status, $out] = self::cli(['release', $name, '--force', '--servers=' . self::url()]);
        $this->assertSame(0, $status);
        $this->assertSame("released \"$name\"\n", $out);
        $this->assertFalse(\RedisLock::inspect($name, self::url())['held']);
        $this->assertFalse($lock->isAcquired());

        [$status, $out] = self::cli(['release', $name, '--force', '--servers=' . self::url()]);
        $this->assertSame(1, $status);
        $this->assertSame("\"$name\" was not held\n", $out);
    }

    public function testWatchPrintsALinePerInterval(): void
    {
        $name = 'cli-watch-' . bin2hex(random_bytes(4));
        $lock = new \RedisLock($name, 30.0, self::url(), ['owner' => 'w1']);
        $this->assertTrue($lock->acquire());
        [$status, $out, $err] = self::cli(['watch', $name, '--servers=' . self::url(), '--interval=0.05', '--count=3']);
        $lock->release();
        $this->assertSame(0, $status, $err);
        $lines = explode("\n", trim($out));
        $this->assertCount(3, $lines);
        $this->assertMatchesRegularExpression('/^\d\d:\d\d:\d\d held for writing by w1, ttl \d+\.\d{3} s, 0 waiting$/', $lines[0]);
    }

    public function testBadUsageIsRefusedWithTheUsage(): void
    {
        foreach ([
            [['inspect'], 'inspect takes one lock name'],
            [['frobnicate', 'x'], 'unknown command "frobnicate"'],
            [['inspect', 'x', '--jsn'], 'unknown option --jsn'],
            [['inspect', 'x', '--force'], '--force is not an option of inspect'],
            [['watch', 'x', '--interval=0'], '--interval must be a number of seconds above 0'],
            [['inspect', 'x', '--servers=redis://:hunter2@'], 'redislock: '],
        ] as [$args, $message]) {
            [$status, $out, $err] = self::cli($args);
            $this->assertSame(2, $status, implode(' ', $args));
            $this->assertStringContainsString($message, $err, implode(' ', $args));
            $this->assertStringNotContainsString('hunter2', $out . $err);
        }
    }

    public function testAnUnreachableServerIsAnErrorWithoutThePassword(): void
    {
        [$status, $out, $err] = self::cli(['inspect', 'x', '--servers=redis://:hunter2@127.0.0.1:1']);
        $this->assertSame(1, $status);
        $this->assertStringContainsString('redislock: ', $err);
        $this->assertStringNotContainsString('hunter2', $out . $err);
    }
}

<?php

namespace RedisLock\Bridge\Tests\Console;

use PHPUnit\Framework\TestCase;

require_once dirname(__DIR__, 3) . '/php-tests/cluster.inc';

/**
 * `redislock doctor` run as a user would, in a PHP process of its own,
 * against real redis-servers: a safe one (exit 0), an evicting one, one
 * without an append-only file (exit 1, each finding with its fix), one
 * whose ACL refuses INFO (unknown, not safe: exit 1), a Sentinel group
 * (master and replica), a local Redis Cluster (every node), --json, and bad usage (exit 2). No password is
 * printed.
 */
final class DoctorTest extends TestCase
{
    private const PASSWORD = 'doctor-s3cret';

    /**
     * @param  list<string>  $args
     * @return array{0: int, 1: string, 2: string}
     */
    private static function cli(array $args): array
    {
        $so = getenv('REDISLOCK_SO') ?: ini_get('extension');
        $cmd = array_merge([PHP_BINARY, '-n', '-d', 'extension=' . $so, dirname(__DIR__, 2) . '/bin/redislock', 'doctor'], $args);
        $proc = proc_open($cmd, [1 => ['pipe', 'w'], 2 => ['pipe', 'w']], $pipes);
        $out = stream_get_contents($pipes[1]);
        $err = stream_get_contents($pipes[2]);
        fclose($pipes[1]);
        fclose($pipes[2]);
        return [proc_close($proc), $out, $err];
    }

    public function testASafeServerIsExitZero(): void
    {
        $server = \TestRedis::start(['--maxmemory', '64mb', '--maxmemory-policy', 'noeviction', '--appendonly', 'yes']);
        [$status, $out, $err] = self::cli(['--servers=' . $server->url()]);
        $this->assertSame(0, $status, $out . $err);
        $this->assertStringContainsString($server->url() . '/0  SAFE', $out);
        $this->assertMatchesRegularExpression('/Redis \d+\.\d+\.\d+, master with 0 replicas, round trip \d+\.\d{3} ms/', $out);
        $this->assertStringContainsString('maxmemory 64mb, maxmemory-policy noeviction; append-only file yes', $out);
        $this->assertMatchesRegularExpression('/scripts \(EVAL\) +yes/', $out);
        $this->assertMatchesRegularExpression('/TIME in scripts +yes/', $out);
        $this->assertMatchesRegularExpression('/CLIENT UNBLOCK +yes/', $out);
        $this->assertMatchesRegularExpression("/ACL on the lock's keys +yes/", $out);
        $this->assertStringContainsString('verdict: SAFE', $out);
    }

    /** A server that refuses TIME in scripts (ElastiCache Serverless) is safe: no lock script reads the clock. */
    public function testTimeRefusedInScriptsIsNotNeeded(): void
    {
        $server = \TestRedis::start(['--appendonly', 'yes', '--rename-command', 'TIME', '']);
        [$status, $out, $err] = self::cli(['--servers=' . $server->url()]);
        $this->assertSame(0, $status, $out . $err);
        $this->assertMatchesRegularExpression('/TIME in scripts +no \(not needed: no lock script reads the clock\)/', $out);
        $this->assertStringContainsString('verdict: SAFE', $out);
    }

    public function testAnEvictingServerIsExitOneWithTheFindingAndItsFix(): void
    {
        $server = \TestRedis::start(['--maxmemory', '4mb', '--maxmemory-policy', 'volatile-lru', '--appendonly', 'yes', '--requirepass', self::PASSWORD]);
        [$status, $out, $err] = self::cli(['--servers=' . $server->url(':' . self::PASSWORD . '@')]);
        $this->assertSame(1, $status, $out . $err);
        $this->assertStringContainsString('UNSAFE  eviction: maxmemory 4194304 with maxmemory-policy volatile-lru', $out);
        $this->assertStringContainsString('set maxmemory-policy noeviction', $out);
        $this->assertStringContainsString('verdict: UNSAFE: 1 of 1 server can lose a held lock by itself', $out);
        $this->assertStringContainsString('Is my Redis safe for locks?', $out);
        $this->assertStringContainsString('redis://:***@127.0.0.1:', $out);
        $this->assertStringNotContainsString(self::PASSWORD, $out . $err);
    }

    public function testAServerWithoutAnAppendOnlyFileIsUnsafeForItsRestarts(): void
    {
        $server = \TestRedis::start(['--appendonly', 'no']);
        [$status, $out] = self::cli(['--servers=' . $server->url()]);
        $this->assertSame(1, $status, $out);
        $this->assertStringContainsString('UNSAFE  no_aof: no append-only file (aof_enabled:0)', $out);
        $this->assertStringContainsString('set appendonly yes', $out);
        $this->assertStringContainsString('append-only file no', $out);
    }

    /** An ACL that refuses INFO: the facts are unknown, reported so, never as safe. */
    public function testAServerThatRefusesInfoIsUnknownNotSafe(): void
    {
        $server = \TestRedis::start(['--appendonly', 'yes']);
        $this->assertSame('OK', redis_cmd($server->url(), 'ACL', 'SETUSER', 'no-info', 'reset', 'on', '>pw', '~*', '&*', '+@all', '-info'));
        [$status, $out, $err] = self::cli(['--servers=' . $server->url('no-info:pw@')]);
        $this->assertSame(1, $status, $out . $err);
        $this->assertStringContainsString('/0  UNKNOWN', $out);
        $this->assertStringContainsString('UNKNOWN info_refused: INFO was refused', $out);
        $this->assertStringContainsString('verdict: UNKNOWN: 1 of 1 server could not be read', $out);
        $this->assertStringNotContainsString('SAFE', str_replace('UNSAFE', '', $out));
        $this->assertStringNotContainsString(':pw@', $out);
    }

    /** A Sentinel group: its master, then its replica (a failover target). */
    public function testASentinelGroupsMasterAndReplicaAreChecked(): void
    {
        $group = redislock_fixture(['topology', 'sentinel']);
        $servers = array_map(static fn (string $url): string => '--servers=' . $url, $group->all('server'));
        [$status, $json, $err] = self::cli([...$servers, '--sentinel=' . $group->get('option.sentinel'), '--json']);
        $report = json_decode($json, true, 512, JSON_THROW_ON_ERROR);
        $this->assertCount(2, $report, $err);
        $this->assertSame((int) parse_url($group->get('node'), PHP_URL_PORT), (int) parse_url($report[0]['server'], PHP_URL_PORT));
        $this->assertSame(['master', 'slave'], array_column($report, 'role'));
        $this->assertSame(1, $report[0]['replicas']);
        $this->assertContains('replica', array_column($report[1]['findings'], 'reason'));
        $this->assertSame(1, $status, 'the fixture runs without an append-only file');
        [, $out] = self::cli([...$servers, '--sentinel=' . $group->get('option.sentinel')]);
        $this->assertStringContainsString('master with 1 replica,', $out);
        $this->assertStringContainsString('NOTE    replicas: 1 replica(s): a failover', $out);
        $this->assertStringContainsString('verdict: UNSAFE: 2 of 2 servers', $out);
    }

    /** Every node of a local Redis Cluster, masters first, each with its facts. */
    public function testEveryNodeOfAClusterIsChecked(): void
    {
        $nodes = test_redis_cluster(3, 1);
        // CLUSTER SLOTS names a replica once it is linked to its master.
        $deadline = microtime(true) + 10;
        while (array_filter((array) redis_cmd($nodes[0]->url(), 'CLUSTER', 'SLOTS'), static fn ($range) => count($range) < 4) !== []
            && microtime(true) < $deadline) {
            usleep(50_000);
        }
        [$status, $json, $err] = self::cli(['--cluster', '--servers=' . $nodes[0]->url(), '--json']);
        $report = json_decode($json, true, 512, JSON_THROW_ON_ERROR);
        $this->assertSame(['master', 'master', 'master', 'slave', 'slave', 'slave'], array_column($report, 'role'), $err);
        $ports = array_map(static fn (array $n): int => (int) parse_url($n['server'], PHP_URL_PORT), array_slice($report, 0, 3));
        sort($ports);
        $expected = array_map(static fn ($n): int => $n->port, $nodes);  // the masters
        sort($expected);
        $this->assertSame($expected, $ports);
        foreach ($report as $node) {
            $this->assertTrue($node['cluster']);
            $this->assertSame('yes', $node['scripts']['status']);
        }
        // The fixture's nodes run without an append-only file.
        $this->assertSame(1, $status);
        $reasons = array_unique(array_merge(...array_map(static fn ($n) => array_column($n['findings'], 'reason'), $report)));
        sort($reasons);
        $this->assertSame(['no_aof', 'replica', 'replicas'], $reasons);
    }

    public function testJsonIsWhatDiagnoseReturns(): void
    {
        $server = \TestRedis::start(['--appendonly', 'yes']);
        [$status, $json] = self::cli(['my-lock', '--servers=' . $server->url(), '--json']);
        $this->assertSame(0, $status);
        $seen = json_decode($json, true, 512, JSON_THROW_ON_ERROR);
        $direct = \RedisLock::diagnose('my-lock', $server->url());
        unset($seen[0]['round_trip_ms'], $direct[0]['round_trip_ms']);
        $this->assertSame($direct, $seen);
        $this->assertSame('safe', $seen[0]['verdict']);
    }

    public function testBadUsageIsExitTwo(): void
    {
        foreach ([['a', 'b'], ['--cluster', '--sentinel=mymaster', '--servers=redis://127.0.0.1:1'], ['--force'], ['--servers']] as $args) {
            [$status, , $err] = self::cli($args);
            $this->assertSame(2, $status, implode(' ', $args) . ': ' . $err);
            $this->assertStringStartsWith('redislock: ', $err);
        }
    }
}

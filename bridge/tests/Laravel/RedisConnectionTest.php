<?php

namespace RedisLock\Bridge\Tests\Laravel;

use PHPUnit\Framework\TestCase;
use RedisLock\Bridge\Laravel\RedisConnection;

/**
 * How a database.redis connection becomes the extension's server URL, key
 * prefix and TLS options, as Laravel's RedisManager and connectors read
 * the same configuration; every URL is one the extension accepts.
 */
class RedisConnectionTest extends TestCase
{
    /** @return array<string, array{0: array<string, mixed>, 1: string, 2: string, 3?: array<string, mixed>}> */
    public static function connections(): array
    {
        $global = ['cluster' => 'redis', 'prefix' => 'laravel_database_'];

        return [
            'skeleton' => [
                ['options' => $global, 'default' => ['url' => null, 'host' => '127.0.0.1', 'password' => null, 'port' => '6379', 'database' => '0']],
                'redis://127.0.0.1:6379/0', 'laravel_database_',
            ],
            'password, user, db' => [
                ['default' => ['host' => 'redis.internal', 'username' => 'app', 'password' => 'p@ss/w:rd', 'port' => 6380, 'database' => 5]],
                'redis://app:p%40ss%2Fw%3Ard@redis.internal:6380/5', '',
            ],
            'user without password is not sent (as Laravel)' => [
                ['default' => ['host' => 'h', 'username' => 'app', 'password' => '', 'port' => 1]],
                'redis://h:1', '',
            ],
            'url with rediss' => [
                ['options' => $global, 'default' => ['url' => 'rediss://:s%40cret@cache.example:6390/3']],
                'rediss://:s%40cret@cache.example:6390/3', 'laravel_database_',
            ],
            'tls scheme and context' => [
                ['default' => ['scheme' => 'tls', 'host' => 'h', 'port' => 6379, 'context' => ['stream' => ['verify_peer' => false, 'cafile' => '/ca.pem']]]],
                'rediss://h:6379', '', ['tls_verify' => false, 'tls_ca' => '/ca.pem'],
            ],
            'tls in the host, Predis ssl' => [
                ['client' => 'predis', 'default' => ['host' => 'tls://h', 'port' => 7000, 'ssl' => ['local_cert' => '/c.pem', 'local_pk' => '/k.pem']]],
                'rediss://h:7000', '', ['tls_cert' => '/c.pem', 'tls_key' => '/k.pem'],
            ],
            'unix socket' => [
                ['default' => ['host' => '/run/redis/redis.sock', 'port' => 0, 'password' => 'pw&x', 'database' => 4]],
                'unix:///run/redis/redis.sock?db=4&password=pw%26x', '',
            ],
            'ipv6' => [
                ['default' => ['host' => '::1', 'port' => 6379]],
                'redis://[::1]:6379', '',
            ],
            'phpredis: the global options prefix wins over the connection\'s key' => [
                ['options' => $global, 'default' => ['host' => 'h', 'port' => 1, 'prefix' => 'own_']],
                'redis://h:1', 'laravel_database_',
            ],
            'phpredis: the connection\'s options win' => [
                ['options' => $global, 'default' => ['host' => 'h', 'port' => 1, 'options' => ['prefix' => 'mine_']]],
                'redis://h:1', 'mine_',
            ],
            'phpredis: an empty prefix is none' => [
                ['options' => ['prefix' => '0'], 'default' => ['host' => 'h', 'port' => 1]],
                'redis://h:1', '',
            ],
            'predis: the connection\'s key wins' => [
                ['client' => 'predis', 'options' => $global, 'default' => ['host' => 'h', 'port' => 1, 'prefix' => 'own_']],
                'redis://h:1', 'own_',
            ],
            'predis: else the options' => [
                ['client' => 'predis', 'options' => $global, 'default' => ['host' => 'h', 'port' => 1]],
                'redis://h:1', 'laravel_database_',
            ],
        ];
    }

    /**
     * A port or database that is not a whole number in range is named as
     * configured: at da6b638 `port => 'abc'` became port 0, and the
     * extension's message named a port nobody configured.
     */
    public function testAPortOrDatabaseThatIsNoNumberIsNamedAsGiven(): void
    {
        $cases = [
            [['port' => 'abc'], '"port" must be a whole number from 1 to 65535, \'abc\' given'],
            [['port' => 70000], '"port" must be a whole number from 1 to 65535, 70000 given'],
            [['port' => '6379x'], '\'6379x\' given'],
            [['database' => 'two'], '"database" must be a whole number from 0 to'],
            [['database' => -1], '-1 given'],
        ];
        foreach ($cases as [$set, $message]) {
            try {
                RedisConnection::resolve(['default' => ['host' => 'h'] + $set], 'default');
                $this->fail('accepted: ' . json_encode($set));
            } catch (\InvalidArgumentException $e) {
                $this->assertStringContainsString('the Redis connection "default": ', $e->getMessage());
                $this->assertStringContainsString($message, $e->getMessage());
            }
        }
    }

    /**
     * @dataProvider connections
     *
     * @param  array<string, mixed>  $redis
     * @param  array<string, mixed>  $options
     */
    #[\PHPUnit\Framework\Attributes\DataProvider('connections')]
    public function testAConnectionBecomesAServerUrlAndAPrefix(array $redis, string $url, string $prefix, array $options = []): void
    {
        $resolved = RedisConnection::resolve($redis, 'default');
        $this->assertSame(['url' => $url, 'prefix' => $prefix, 'options' => $options], $resolved);
        $probe = new \RedisLock('k', 1.0, $resolved['url']);  // the extension accepts it (sends nothing)
        $this->assertStringNotContainsString('p@ss', print_r($probe, true));
    }
}

<?php

namespace RedisLock\Bridge\Tests;

use PHPUnit\Framework\Attributes\DataProvider;
use PHPUnit\Framework\TestCase;
use RedisLock\Bridge\Laravel\RedisLockLock;
use RedisLock\Bridge\Laravel\RedisLockStore as LaravelStore;
use RedisLock\Bridge\Masked;
use RedisLock\Bridge\Symfony\RedisLockSemaphoreStore;
use RedisLock\Bridge\Symfony\RedisLockStore as SymfonyStore;
use Symfony\Component\Lock\LockFactory;

/**
 * Both bridges (with the Symfony semaphore store and the Laravel funnel)
 * show their configuration through the extension's own masking: no
 * password (with `/`, `@` or `:` in it), no user name given without a
 * password, no sentinel_password and no owner label appears in var_dump(),
 * print_r(), var_export() or json of the stores, locks and funnels.
 */
class MaskedTest extends TestCase
{
    private const SECRETS = ['pa/ss', 'p@ss', 'pa:ss', 'secretuser', 'sentinelpw', 'owner-label'];

    /** @return array<string, array{0: string|array<int, string>}> */
    public static function servers(): array
    {
        return [
            'slash' => ['redis://:' . rawurlencode('pa/ss') . '@127.0.0.1:6379'],
            'at' => ['rediss://u:' . rawurlencode('p@ss') . '@127.0.0.1:6380/2'],
            'colon' => [['redis://u:' . rawurlencode('pa:ss') . '@127.0.0.1:1', 'redis://:x' . rawurlencode('pa:ss') . '@127.0.0.1:2']],
            'user only' => ['redis://secretuser@127.0.0.1:6379'],
            'raw slash (malformed)' => ['redis://u:pa/ss@127.0.0.1'],
            'raw at (malformed)' => ['rediss://u:p@ss@127.0.0.1'],
        ];
    }

    /**
     * The annotation is PHPUnit 9's (Debian 12); PHPUnit 10+ reads the
     * attribute and then ignores the annotation (PHPUnit 12 drops it).
     *
     * @dataProvider servers
     */
    #[DataProvider('servers')]
    public function testStoresAndLocksShowNoSecret(string|array $servers): void
    {
        $options = ['sentinel_password' => 'sentinelpw', 'prefix' => 'app:'];
        $objects = [
            'symfony store' => $symfony = new SymfonyStore($servers, $options),
            'symfony lock' => (new LockFactory($symfony))->createLock('job'),
            'symfony semaphore store' => new RedisLockSemaphoreStore($servers, $options),
            // (The Laravel store takes its prefix as a key of its own.)
            'laravel store' => $laravel = new LaravelStore(null, [
                'servers' => $servers, 'options' => array_diff_key($options, ['prefix' => 0]), 'prefix' => 'app:',
            ]),
            'laravel lock' => $laravel->lock('job', 10, 'owner-label'),
            'laravel restored' => $laravel->restoreLock('job', 'owner-label'),
            'laravel funnel' => $laravel->funnel('job')->limit(2),
        ];
        foreach ($objects as $what => $object) {
            foreach ($this->renderings($object) as $how => $text) {
                foreach (self::SECRETS as $secret) {
                    $this->assertStringNotContainsString($secret, $text, "$what, $how");
                }
            }
        }
        $this->assertStringContainsString('***', print_r($symfony, true));
    }

    /** Servers are shown as the extension shows them. */
    public function testServersAreMaskedAsTheExtensionMasksThem(): void
    {
        $url = 'redis://u:' . rawurlencode('pa/ss') . '@127.0.0.1:6379/3';
        $this->assertSame(
            (new \RedisLock('k', 1.0, $url))->__debugInfo()['servers'],
            Masked::servers($url),
        );
        $this->assertSame(['redis://u:***@127.0.0.1:6379/3'], Masked::servers($url));
        $this->assertStringStartsWith('invalid: ', Masked::servers('redis://secretuser@h'));
        $this->assertSame(['owner' => '***', 'prefix' => 'p'], Masked::options(['owner' => 'x', 'prefix' => 'p']));
    }

    /** @return array<string, string> */
    private function renderings(object $object): array
    {
        ob_start();
        var_dump($object);
        $dump = (string) ob_get_clean();

        return [
            'var_dump' => $dump,
            'print_r' => print_r($object, true),
            'debugInfo' => method_exists($object, '__debugInfo') ? json_encode($object->__debugInfo()) : '',
        ];
    }
}

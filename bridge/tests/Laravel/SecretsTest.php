<?php

namespace RedisLock\Bridge\Tests\Laravel;

use Illuminate\Support\Facades\Cache;
use RedisLock\Bridge\Laravel\ConcurrencyLimiterBuilder;
use RedisLock\Bridge\Laravel\RedisLockLock;
use RedisLock\Bridge\Laravel\RedisLockStore;

/**
 * No Laravel bridge object shows the Redis password, whichever way it is
 * printed: var_dump(), print_r(), var_export(), an (array) cast (printed
 * with print_r and var_export), json_encode(), serialize() (refused with a
 * LogicException that says so). Stores from a URL with the password and
 * from a database.redis connection with it, built by the cache manager
 * (whose application config holds the password) and by hand; their
 * locks (free, held, restored) and funnels. var_dump() still shows the
 * masked servers.
 */
class SecretsTest extends LaravelRedisTestCase
{
    /** @var array<int, RedisLockLock> locks held by a test, released after it */
    private array $held = [];

    /** Releases the locks the test took (they outlive the request otherwise). */
    protected function tearDown(): void
    {
        foreach ($this->held as $lock) {
            $lock->release();
        }
        $this->held = [];
        parent::tearDown();
    }

    /** @return array<string, object> every object to check, by what it is */
    private function objects(): array
    {
        $this->app['config']->set('cache.stores.by_url', [
            'driver' => 'redislock', 'servers' => $this->url(), 'options' => ['retry_delay' => 0.5],
        ]);
        $byUrl = Cache::store('by_url')->getStore();
        $byConnection = Cache::store('locks')->getStore();
        $this->assertTrue(Cache::store('locks')->put('entry', 'value', 10), 'its entry store (Laravel\'s redis) is in use');
        $byHand = new RedisLockStore(null, ['servers' => [$this->url(), $this->url() . '/1']]);
        $this->held[] = $held = $byConnection->lock('held', 10, 'owner-1');
        $this->assertTrue($held->get(), 'the held lock is held (it holds a RedisLock object)');
        $this->held[] = $heldForever = $byUrl->lock('held-forever');
        $this->assertTrue($heldForever->get(), 'an auto-renewed hold');

        return [
            'store by url' => $byUrl,
            'store by connection' => $byConnection,
            'store by hand' => $byHand,
            'lock' => $byUrl->lock('free', 10),
            'held lock' => $held,
            'held lock without expiry' => $heldForever,
            'restored lock' => $byConnection->restoreLock('held', 'owner-1'),
            'funnel by url' => $byUrl->funnel('jobs')->limit(2),
            'funnel by connection' => $byConnection->funnel('jobs')->limit(2),
            'lock by hand' => new RedisLockLock('x', 10, null, $this->url()),
            'funnel by hand' => new ConcurrencyLimiterBuilder('y', $this->url()),
        ];
    }

    /** The password appears in no rendering of any object. */
    public function testNoRenderingShowsThePassword(): void
    {
        $checked = 0;
        foreach ($this->objects() as $what => $object) {
            foreach ($this->renderings($object) as $how => $text) {
                $this->assertStringNotContainsString(self::PASSWORD, $text, "$what, $how");
                $checked++;
            }
        }
        $this->assertSame(11 * 8, $checked);
    }

    /** serialize() and unserialize() are refused, saying why; the message has no password. */
    public function testSerializingIsRefused(): void
    {
        foreach ($this->objects() as $what => $object) {
            try {
                serialize($object);
                $this->fail("$what was serialized");
            } catch (\LogicException $e) {
                $this->assertStringContainsString('cannot be serialized', $e->getMessage(), $what);
                $this->assertStringNotContainsString(self::PASSWORD, $e->getMessage() . $e->getTraceAsString(), $what);
            }
        }
        $this->expectException(\LogicException::class);
        unserialize('O:' . strlen(RedisLockStore::class) . ':"' . RedisLockStore::class . '":0:{}');
    }

    /** var_dump() stays useful: masked servers, with host and port. */
    public function testVarDumpShowsTheMaskedServers(): void
    {
        $objects = $this->objects();
        foreach (['store by url', 'store by connection', 'held lock', 'funnel by connection'] as $what) {
            $dump = $this->dump($objects[$what]);
            $this->assertStringContainsString('redis://:***@127.0.0.1:' . self::$server->port, $dump, $what);
        }
        $this->assertStringContainsString('"connection"]=>' . "\n" . '  string(7) "default"', $this->dump($objects['store by connection']));
        $this->assertSame(
            json_encode($objects['store by connection']->__debugInfo()),
            json_encode($objects['store by connection']),
            'json_encode() gives the masked view',
        );
    }

    /** A clone keeps its configuration (shared, never copied into a property). */
    public function testAClonedLockStillWorks(): void
    {
        $lock = Cache::store('locks')->lock('cloned', 10);
        $clone = clone $lock;
        $this->assertTrue($clone->get());
        $this->assertFalse($lock->get());
        $this->assertTrue($clone->release());
    }

    /** @return array<string, string> */
    private function renderings(object $object): array
    {
        $array = (array) $object;

        return [
            'var_dump' => $this->dump($object),
            'print_r' => print_r($object, true),
            // @: a leaked application graph has cycles, which var_export() warns about
            'var_export' => @var_export($object, true),
            '(array) print_r' => print_r($array, true),
            '(array) var_export' => @var_export($array, true),
            '(array) var_dump' => $this->dump($array),
            'json_encode' => (string) json_encode($object),
            'json_encode (array)' => (string) json_encode($array, JSON_PARTIAL_OUTPUT_ON_ERROR),
        ];
    }

    private function dump(mixed $value): string
    {
        ob_start();
        var_dump($value);

        return (string) ob_get_clean();
    }
}

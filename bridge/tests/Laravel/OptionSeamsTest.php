<?php

namespace RedisLock\Bridge\Tests\Laravel;

use Illuminate\Support\Facades\Cache;

/**
 * Seams between the store's options and what each object accepts: a store
 * with `on_lost => interrupt` serves funnels and fixed-lease locks (the
 * option acts on auto-renewed holds only), and isOwnedBy() answers false
 * for owners no lock can have, `~~read...` included, instead of throwing.
 */
class OptionSeamsTest extends LaravelTestCase
{
    /** The store `interrupting`: on_lost => interrupt. */
    protected function setUp(): void
    {
        parent::setUp();
        $this->app['config']->set('cache.stores.interrupting', [
            'driver' => 'redislock', 'servers' => $this->url(), 'prefix' => $this->prefix, 'options' => ['on_lost' => 'interrupt'],
        ]);
    }

    public function testAFunnelWorksOnAStoreWithOnLostInterrupt(): void
    {
        $value = Cache::store('interrupting')->funnel('jobs')->limit(1)->block(1)->then(fn () => 'ran');
        $this->assertSame('ran', $value);
    }

    public function testLocksWorkOnAStoreWithOnLostInterrupt(): void
    {
        $store = Cache::store('interrupting');

        $fixed = $store->lock('fixed', 10);
        $this->assertTrue($fixed->get());
        $this->assertTrue($store->restoreLock('fixed', $fixed->owner())->isOwnedByCurrentProcess());
        $this->assertTrue($fixed->refresh());
        $this->assertTrue($store->restoreLock('fixed', $fixed->owner())->release(), 'a restored lock releases it');

        $renewed = $store->lock('renewed');  // $seconds = 0: auto-renewed, on_lost applies
        $this->assertTrue($renewed->get());
        $this->assertFalse($store->lock('renewed', 10)->get());
        $this->assertTrue($renewed->release());
    }

    public function testImpossibleOwnersAreNotOwners(): void
    {
        $lock = Cache::lock('owned', 10);
        foreach ([false, true] as $held) {
            if ($held) {
                $this->assertTrue($lock->get());
            }
            foreach (['~~read', '~~read:x:1', '', str_repeat('o', 1025)] as $owner) {
                $this->assertFalse(Cache::lock('owned')->isOwnedBy($owner), var_export($owner, true) . ($held ? ' (held)' : ''));
                $this->assertFalse(Cache::lock('owned', 10, $owner === '' ? null : $owner)->isOwnedBy($owner));
            }
        }
        $this->assertTrue(Cache::lock('owned')->isOwnedBy($lock->owner()), 'the real owner still is');
        $this->assertTrue($lock->release());
    }
}

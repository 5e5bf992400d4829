<?php

namespace RedisLock\Bridge\Symfony;

use RedisLock\Bridge\Symfony\DependencyInjection\DefaultFactoryPass;
use RedisLock\Bridge\Symfony\DependencyInjection\RedisLockExtension;
use Symfony\Component\DependencyInjection\ContainerBuilder;
use Symfony\Component\DependencyInjection\Extension\ExtensionInterface;
use Symfony\Component\HttpKernel\Bundle\Bundle;

/**
 * The redislock bundle: `RedisLock\Bridge\Symfony\RedisLockBundle::class => ['all' => true]`
 * in `config/bundles.php`, configured under `redislock:`.
 *
 * It registers the lock store and the semaphore store on the extension,
 * a Symfony LockFactory and SemaphoreFactory on them, and (unless
 * `redislock.lock.default` / `redislock.semaphore.default` is false) makes
 * them the application's `lock.factory` / `LockFactory` and
 * `semaphore.factory` / `SemaphoreFactory`. See docs/frameworks.md.
 */
final class RedisLockBundle extends Bundle
{
    /** Adds the pass that makes the bundle's factories the application's defaults. */
    public function build(ContainerBuilder $container): void
    {
        parent::build($container);
        $container->addCompilerPass(new DefaultFactoryPass());
    }

    /** The extension of `redislock:` (not `redis_lock:`, the name Symfony would derive). */
    public function getContainerExtension(): ?ExtensionInterface
    {
        return $this->extension ??= new RedisLockExtension();
    }
}

<?php

namespace RedisLock\Bridge\Symfony\DependencyInjection;

use Symfony\Component\DependencyInjection\Alias;
use Symfony\Component\DependencyInjection\Compiler\CompilerPassInterface;
use Symfony\Component\DependencyInjection\ContainerBuilder;

/**
 * Makes the bundle's factories the application's defaults:
 * `lock.factory` and the `LockFactory` autowiring alias point at
 * `redislock.lock.factory`, `semaphore.factory` and `SemaphoreFactory` at
 * `redislock.semaphore.factory` (`redislock.lock.default` /
 * `redislock.semaphore.default`, true unless set to false).
 *
 * A pass, not the extension: it runs after every bundle's extension, so
 * it replaces what `framework.lock` (and, from Symfony 6.1,
 * `framework.semaphore`) registered whatever the order of the bundles.
 * `framework.lock` cannot name a store service: its resources are DSN
 * strings that Symfony's StoreFactory turns into its own stores.
 */
final class DefaultFactoryPass implements CompilerPassInterface
{
    /** The tag, with attributes `id` (e.g. `lock.factory`) and `type` (the factory's class). */
    public const TAG = 'redislock.default_factory';

    /** Points each tagged factory's `id` and `type` aliases at it. */
    public function process(ContainerBuilder $container): void
    {
        foreach ($container->findTaggedServiceIds(self::TAG, true) as $factory => $tags) {
            foreach ($tags as $tag) {
                $replaced = $container->hasAlias($tag['id']) ? (string) $container->getAlias($tag['id']) : null;
                $container->setAlias($tag['id'], new Alias($factory, false));
                $container->setAlias($tag['type'], new Alias($tag['id'], false));
                $container->log($this, sprintf('"%s" is now "%s"%s.', $tag['id'], $factory, $replaced === null ? '' : sprintf(' (was "%s")', $replaced)));
            }
            $container->getDefinition($factory)->clearTag(self::TAG);
        }
    }
}

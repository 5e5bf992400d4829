<?php

namespace RedisLock\Bridge\Tests\Symfony\Bundle;

use Symfony\Component\DependencyInjection\Compiler\CompilerPassInterface;
use Symfony\Component\DependencyInjection\ContainerBuilder;

/** Makes the given services and aliases public, so a test can get them by id. */
final class PublicIdsPass implements CompilerPassInterface
{
    /** @param list<string> $ids */
    public function __construct(private readonly array $ids)
    {
    }

    /** Sets each id that exists public; ids that do not exist are left absent. */
    public function process(ContainerBuilder $container): void
    {
        foreach ($this->ids as $id) {
            if ($container->hasAlias($id)) {
                $container->getAlias($id)->setPublic(true);
            } elseif ($container->hasDefinition($id)) {
                $container->getDefinition($id)->setPublic(true);
            }
        }
    }
}

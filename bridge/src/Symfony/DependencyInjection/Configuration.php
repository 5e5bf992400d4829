<?php

namespace RedisLock\Bridge\Symfony\DependencyInjection;

use RedisLock\Bridge\OptionNames;
use Symfony\Component\Config\Definition\Builder\ArrayNodeDefinition;
use Symfony\Component\Config\Definition\Builder\TreeBuilder;
use Symfony\Component\Config\Definition\ConfigurationInterface;
use Symfony\Component\Lock\LockFactory;
use Symfony\Component\Semaphore\SemaphoreFactory;

/**
 * The `redislock:` tree:
 *
 *     redislock:
 *         servers: '%env(REDISLOCK_URL)%'   # one URL, or a list; default: php.ini redislock.servers
 *         options: { prefix: 'app:' }       # the extension's options (not owner, reentrant), and log_wait_over
 *         lock: { enabled: true, initial_ttl: 300, default: true }
 *         semaphore: { enabled: true, default: true }
 *         metrics: false                    # true: the MetricsController service (a route of your own points at it)
 *
 * Unknown keys are refused by Symfony's Config, which names them and the
 * nearest valid key. The values of `options` and `servers` are checked by
 * the extension itself (see RedisLockExtension).
 */
final class Configuration implements ConfigurationInterface
{
    /** Options the stores set themselves: refused under `options`. */
    private const STORE_OWNED = ['owner', 'reentrant'];

    /** The tree of `redislock:`. */
    public function getConfigTreeBuilder(): TreeBuilder
    {
        $tree = new TreeBuilder('redislock');
        $root = $tree->getRootNode();
        $root
            ->children()
                ->variableNode('servers')
                    ->info('One Redis URL, or a list (Redlock masters; Sentinels or seed nodes with the sentinel / cluster options). Null: php.ini redislock.servers. Prefer %env()%: a literal password ends up in the compiled container.')
                    ->defaultNull()
                    ->validate()
                        ->ifTrue(static fn ($v) => !self::isServers($v))
                        // No %s: the value would show its password.
                        ->thenInvalid('Expected a URL string or a list of URL strings.')
                    ->end()
                ->end()
            ->end();
        $this->addOptions($root);
        $this->addStore($root, 'lock', class_exists(LockFactory::class), 'symfony/lock')
            ->children()
                ->floatNode('initial_ttl')
                    ->info('The lease of a save() in seconds, until the Lock\'s own ttl applies (RedisLockStore\'s $initialTtl).')
                    ->defaultValue(300.0)
                ->end()
                ->booleanNode('default')
                    ->info('Make it the application\'s lock.factory and LockFactory (instead of framework.lock\'s).')
                    ->defaultTrue()
                ->end()
            ->end();
        $this->addStore($root, 'semaphore', class_exists(SemaphoreFactory::class), 'symfony/semaphore')
            ->children()
                ->booleanNode('default')
                    ->info('Make it the application\'s semaphore.factory and SemaphoreFactory.')
                    ->defaultTrue()
                ->end()
            ->end();
        $root->children()
            ->arrayNode('metrics')
                ->info('The controller service RedisLock\\Bridge\\Symfony\\MetricsController: RedisLock::metrics() in Prometheus\'s text format. Point a route of config/routes/ at it (docs/observability.md).')
                ->canBeEnabled()
            ->end();

        return $tree;
    }

    /** `options`: one node per extension option, so an unknown key is refused with a suggestion. */
    private function addOptions(ArrayNodeDefinition $root): void
    {
        $children = $root
            ->children()
                ->arrayNode('options')
                    ->info('The extension\'s options (prefix, auto_renew, retry_delay, timeouts, cluster, sentinel, TLS, ...): see the README, "Options"; and the bridge\'s log_wait_over (seconds, default 1.0; null: never): log waits longer than that.')
                    ->addDefaultsIfNotSet()
                    ->children();
        foreach ([...array_diff(OptionNames::all(), self::STORE_OWNED), ...OptionNames::BRIDGE] as $name) {
            $children->variableNode($name)->end();
        }
    }

    /** A store's section: enabled by default when its Symfony component is installed. */
    private function addStore(ArrayNodeDefinition $root, string $name, bool $installed, string $package): ArrayNodeDefinition
    {
        $node = $root->children()->arrayNode($name);
        $node->info(sprintf('The %s store and factory (needs %s).', $name, $package));

        return $installed ? $node->canBeDisabled() : $node->canBeEnabled();
    }

    /** Whether $value is a URL, a list of URLs, or null. */
    private static function isServers(mixed $value): bool
    {
        if ($value === null || is_string($value)) {
            return true;
        }

        return is_array($value) && $value !== [] && array_is_list($value)
            && count(array_filter($value, 'is_string')) === count($value);
    }
}

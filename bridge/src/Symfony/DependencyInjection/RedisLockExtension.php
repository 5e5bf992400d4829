<?php

namespace RedisLock\Bridge\Symfony\DependencyInjection;

use RedisLock\Bridge\Console\RedisLockCommand;
use RedisLock\Bridge\Console\ServerTarget;
use RedisLock\Bridge\OptionNames;
use RedisLock\Bridge\Symfony\MetricsController;
use RedisLock\Bridge\Symfony\RedisLockSemaphoreStore;
use RedisLock\Bridge\Symfony\RedisLockStore;
use RedisLock\Semaphore;
use Symfony\Component\Config\Definition\Exception\InvalidConfigurationException;
use Symfony\Component\Console\Command\Command;
use Symfony\Component\DependencyInjection\Alias;
use Symfony\Component\DependencyInjection\ContainerBuilder;
use Symfony\Component\DependencyInjection\ContainerInterface;
use Symfony\Component\DependencyInjection\Definition;
use Symfony\Component\DependencyInjection\Exception\LogicException;
use Symfony\Component\DependencyInjection\Extension\Extension;
use Symfony\Component\DependencyInjection\Reference;
use Symfony\Component\Lock\LockFactory;
use Symfony\Component\Semaphore\SemaphoreFactory;

/**
 * Loads `redislock:` into the container.
 *
 * | service id                    | class                    | autowiring                                  |
 * |-------------------------------|--------------------------|---------------------------------------------|
 * | `redislock.lock.store`        | RedisLockStore           | `RedisLockStore`                            |
 * | `redislock.lock.factory`      | LockFactory              | `LockFactory $redislockLockFactory`         |
 * | `redislock.semaphore.store`   | RedisLockSemaphoreStore  | `RedisLockSemaphoreStore`                   |
 * | `redislock.semaphore.factory` | SemaphoreFactory         | `SemaphoreFactory $redislockSemaphoreFactory` |
 *
 * With `default: true` (the default) DefaultFactoryPass also points
 * `lock.factory` / `LockFactory` and `semaphore.factory` /
 * `SemaphoreFactory` at them. The stores are tagged `kernel.reset`, and
 * get the `logger` service on the `lock` and `semaphore` monolog channels
 * (lost leases, long waits, long holds: {@see \RedisLock\Bridge\LockLog}),
 * as their factories do. With symfony/console,
 * `redislock.command.inspect|release|watch|metrics` are the console
 * commands `redislock:inspect|release|watch|metrics` on these servers.
 * With `metrics: true`, the public service `MetricsController` (also
 * `redislock.metrics.controller`) answers `RedisLock::metrics()`.
 *
 * The configuration is checked while the container is built: unknown
 * keys by the tree (Configuration), values, combinations of options and
 * servers by the extension itself, building its own objects as the
 * stores will (nothing is sent to Redis). A configuration that reads
 * environment variables (`%env()%`) is known only at run time: the
 * stores refuse unknown options when they are built, the extension the
 * rest at the first lock or permit.
 */
final class RedisLockExtension extends Extension
{
    /** Registers the stores and factories that the configuration enables. */
    public function load(#[\SensitiveParameter] array $configs, ContainerBuilder $container): void
    {
        $config = $this->processConfiguration(new Configuration(), $configs);
        $servers = $config['servers'];
        $options = $config['options'];
        if ($config['lock']['enabled']) {
            self::requireClass(LockFactory::class, 'lock', 'symfony/lock');
            $ttl = $config['lock']['initial_ttl'];
            self::checkNow($container, [$servers, $options, $ttl], static fn () => new RedisLockStore($servers, $options, $ttl)
                && new \RedisLock('probe', $ttl, $servers, ['reentrant' => false] + OptionNames::withoutBridge($options)));
            $this->register($container, 'lock', RedisLockStore::class, [$servers, $options, $ttl], LockFactory::class, $config['lock']['default']);
        }
        if ($config['semaphore']['enabled']) {
            self::requireClass(SemaphoreFactory::class, 'semaphore', 'symfony/semaphore');
            self::checkNow($container, [$servers, $options], static fn () => new RedisLockSemaphoreStore($servers, $options)
                && new Semaphore('probe', 1, 1.0, $servers, OptionNames::withoutBridge($options)));
            $this->register($container, 'semaphore', RedisLockSemaphoreStore::class, [$servers, $options], SemaphoreFactory::class, $config['semaphore']['default']);
        }
        if (class_exists(Command::class)) {
            // bin/console redislock:inspect|release|watch NAME, redislock:metrics, on these servers.
            $container->setDefinition('redislock.console.target', new Definition(ServerTarget::class, [$servers, OptionNames::withoutBridge($options)]));
            foreach (array_keys(RedisLockCommand::VERBS) as $verb) {
                $container->setDefinition("redislock.command.$verb", (new Definition(RedisLockCommand::class, [$verb, new Reference('redislock.console.target')]))
                    ->addTag('console.command', ['command' => "redislock:$verb"]));
            }
        }
        if ($config['metrics']['enabled']) {
            // Public, by class name: a route's `controller: RedisLock\Bridge\Symfony\MetricsController`.
            $container->setDefinition(MetricsController::class, (new Definition(MetricsController::class))
                ->setPublic(true)
                ->addTag('controller.service_arguments'));
            $container->setAlias('redislock.metrics.controller', new Alias(MetricsController::class, true));
        }
    }

    /** `redislock`, the root of the configuration. */
    public function getAlias(): string
    {
        return 'redislock';
    }

    /** The `redislock:` tree. */
    public function getConfiguration(array $config, ContainerBuilder $container): Configuration
    {
        return new Configuration();
    }

    /**
     * `redislock.<kind>.store`, `redislock.<kind>.factory` and their
     * autowiring aliases; the factory tagged for DefaultFactoryPass when
     * it is to be the application's default.
     *
     * @param list<mixed> $arguments the store's constructor arguments
     */
    private function register(ContainerBuilder $container, string $kind, string $storeClass, #[\SensitiveParameter] array $arguments, string $factoryClass, bool $default): void
    {
        $store = "redislock.$kind.store";
        $factory = "redislock.$kind.factory";
        $container->setDefinition($store, (new Definition($storeClass, $arguments))
            ->addTag('kernel.reset', ['method' => 'reset'])
            ->addMethodCall('setLogger', [new Reference('logger', ContainerInterface::IGNORE_ON_INVALID_REFERENCE)])
            ->addTag('monolog.logger', ['channel' => $kind]));
        $container->setAlias($storeClass, new Alias($store, false));

        $definition = (new Definition($factoryClass, [new Reference($store)]))
            ->addMethodCall('setLogger', [new Reference('logger', ContainerInterface::IGNORE_ON_INVALID_REFERENCE)])
            ->addTag('monolog.logger', ['channel' => $kind]);
        if ($default) {
            $definition->addTag(DefaultFactoryPass::TAG, ['id' => "$kind.factory", 'type' => $factoryClass]);
        }
        $container->setDefinition($factory, $definition);
        $container->registerAliasForArgument($factory, $factoryClass, $factory);
    }

    /**
     * Builds the store and the extension's object now, as the container
     * and the store will, so that a bad configuration fails the build
     * (`cache:clear`), not the first request. Skipped when a value comes
     * from the environment (known only at run time) or the extension is
     * not loaded in the building process. The extension's messages never
     * show a password.
     *
     * @param list<mixed> $values
     */
    private static function checkNow(ContainerBuilder $container, #[\SensitiveParameter] array $values, \Closure $build): void
    {
        $usedEnvs = [];
        $container->resolveEnvPlaceholders($values, null, $usedEnvs);
        if ($usedEnvs !== [] || !class_exists(\RedisLock::class)) {
            return;
        }
        try {
            $build();
        } catch (\InvalidArgumentException|\ValueError|\TypeError $e) {
            throw new InvalidConfigurationException(sprintf('Invalid configuration for path "redislock": %s', $e->getMessage()), 0, $e);
        }
    }

    private static function requireClass(string $class, string $kind, string $package): void
    {
        if (!class_exists($class)) {
            throw new LogicException(sprintf('redislock.%1$s needs %2$s ("composer require %2$s"), or set "redislock.%1$s: false".', $kind, $package));
        }
    }
}

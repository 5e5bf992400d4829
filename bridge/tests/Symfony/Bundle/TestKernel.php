<?php

namespace RedisLock\Bridge\Tests\Symfony\Bundle;

use Psr\Log\NullLogger;
use RedisLock\Bridge\Symfony\RedisLockBundle;
use Symfony\Bundle\FrameworkBundle\FrameworkBundle;
use Symfony\Component\Config\Loader\LoaderInterface;
use Symfony\Component\DependencyInjection\Compiler\PassConfig;
use Symfony\Component\DependencyInjection\ContainerBuilder;
use Symfony\Component\HttpKernel\Kernel;

/**
 * The smallest real Symfony application: FrameworkBundle and the
 * redislock bundle, configured from PHP arrays, its cache in a directory
 * of its own. An environment name of its own too, so that several
 * kernels built in one PHPUnit process never share a container class.
 * The ids in $publicIds are made public (after the bundle's pass) so that
 * the test can get them by id, as `bin/console debug:container` shows them.
 */
final class TestKernel extends Kernel
{
    /**
     * @param array<string, mixed> $redislock what `redislock:` holds in config/packages/redislock.yaml
     * @param array<string, mixed> $framework what `framework:` holds, besides `test: true`
     * @param list<string>         $publicIds service ids and aliases the test gets from the container
     * @param \Closure|null        $services  null: the bundle; else no bundle, and this registers
     *                                         services (as config/services.yaml would) instead
     * @param class-string         $logger    the class of the `logger` service (built without arguments)
     */
    public function __construct(
        private readonly string $dir,
        private readonly array $redislock,
        private readonly array $framework = [],
        private readonly array $publicIds = [],
        private readonly ?\Closure $services = null,
        private readonly string $logger = NullLogger::class,
    ) {
        parent::__construct('t' . bin2hex(random_bytes(4)), false);
    }

    /** FrameworkBundle and the redislock bundle (FrameworkBundle alone with $services). */
    public function registerBundles(): iterable
    {
        return $this->services === null ? [new FrameworkBundle(), new RedisLockBundle()] : [new FrameworkBundle()];
    }

    /** The configuration, a public service that autowires what an application would, a logger (a null one by default). */
    public function registerContainerConfiguration(LoaderInterface $loader): void
    {
        $loader->load(function (ContainerBuilder $container): void {
            $container->loadFromExtension('framework', ['test' => true, 'secret' => 'test'] + $this->framework);
            if ($this->services === null) {
                $container->loadFromExtension('redislock', $this->redislock);
            } else {
                ($this->services)($container);
            }
            $container->register(Autowired::class, Autowired::class)->setAutowired(true)->setPublic(true);
            // Quiet, and without the default logger's cycles (var_export in BundleSecretsTest).
            $container->register('logger', $this->logger);
        });
    }

    public function getProjectDir(): string
    {
        return $this->dir;
    }

    public function getCacheDir(): string
    {
        return $this->dir . '/cache';
    }

    public function getLogDir(): string
    {
        return $this->dir . '/log';
    }

    /** Makes $publicIds public, after the bundle's DefaultFactoryPass. */
    protected function build(ContainerBuilder $container): void
    {
        $container->addCompilerPass(new PublicIdsPass($this->publicIds), PassConfig::TYPE_BEFORE_OPTIMIZATION, -100);
    }
}

<?php

namespace RedisLock\Bridge\Symfony;

use Symfony\Contracts\Service\ResetInterface;

/*
 * Symfony's ResetInterface (symfony/service-contracts, Debian's
 * php-symfony-service-contracts) when it is installed, so the stores are
 * reset at `kernel.reset` by autoconfiguration; else the same reset()
 * method without it. symfony/lock and symfony/semaphore do not require
 * service-contracts: a store used on its own must not fail to load.
 */
if (interface_exists(ResetInterface::class)) {
    /**
     * @internal the stores' reset(), as Symfony's ResetInterface
     */
    interface ResettableInterface extends ResetInterface
    {
        public function reset(): void;
    }
} else {
    /**
     * @internal the stores' reset(), without symfony/service-contracts
     */
    interface ResettableInterface
    {
        public function reset(): void;
    }
}

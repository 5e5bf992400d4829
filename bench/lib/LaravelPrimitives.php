<?php

declare(strict_types=1);

require_once '/usr/share/php/Illuminate/autoload.php';

use Illuminate\Container\Container;
use Illuminate\Support\Facades\Facade;

/**
 * Laravel's funnel as its users write it, one builder per hold:
 * `funnel($name)->limit($permits)->block($wait)->then($section, $failure)`,
 * with the builder's other defaults (releaseAfter 60 s). The contenders
 * differ only in where the funnel comes from (funnel()).
 */
abstract class LaravelPrimitives extends PrimitiveContender
{
    /** A funnel builder on $name. */
    abstract protected function funnel(string $name): object;

    /** A bare container with the facades on, as a Laravel application has them. */
    protected static function container(): Container
    {
        $app = new Container();
        Container::setInstance($app);
        Facade::clearResolvedInstances();
        Facade::setFacadeApplication($app);
        return $app;
    }

    public function prepare(string $workload): void
    {
        // Connects and warms the builder's code paths on a private name.
        $this->funnel('bench:prepare:' . getmypid())->limit(4)->block(1)->then(fn () => true, fn () => false);
    }

    public function withPermit(string $name, int $permits, float $wait, callable $section): bool
    {
        // then() returns the callback's value, or the failure callback's on a time-out.
        return $this->funnel($name)->limit($permits)->block((int) ceil($wait))->then(function () use ($section) {
            $section();
            return true;
        }, fn () => false);
    }
}

<?php

// The route of docs/observability.md, as config/routes/redislock.php
// (the YAML there is the same route).

use RedisLock\Bridge\Symfony\MetricsController;
use Symfony\Component\Routing\Loader\Configurator\RoutingConfigurator;

return static function (RoutingConfigurator $routes): void {
    $routes->add('redislock_metrics', '/redislock/metrics')
        ->controller(MetricsController::class)
        ->methods(['GET']);
};

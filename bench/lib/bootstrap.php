<?php

declare(strict_types=1);

// Loads the harness library. Peer autoloaders are loaded by each contender
// file, so a missing peer only breaks its own contender.
require_once __DIR__ . '/Contender.php';
require_once __DIR__ . '/contenders.php';
require_once __DIR__ . '/Cli.php';
require_once __DIR__ . '/RedisStats.php';
require_once __DIR__ . '/Stats.php';
require_once __DIR__ . '/Intervals.php';
require_once __DIR__ . '/Topology.php';
require_once __DIR__ . '/TopologyStats.php';
require_once __DIR__ . '/topology-contenders.php';
require_once __DIR__ . '/primitive-contenders.php';
require_once __DIR__ . '/Occupancy.php';
require_once __DIR__ . '/Children.php';

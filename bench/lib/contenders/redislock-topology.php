<?php

declare(strict_types=1);

/**
 * The extension on a topology: one URL (single), the list of every master's
 * URL (Redlock), or the first node's URL with 'cluster' => true (Cluster).
 * Same adapter class as the main suites (redislock.php).
 */
if (!class_exists('RedislockContender', false)) {
    require __DIR__ . '/redislock.php';
}

return fn (Topology $t) => match ($t->kind) {
    'single' => new RedislockContender($t->urls()[0]),
    'redlock' => new RedislockContender($t->urls()),
    'cluster' => new RedislockContender($t->urls()[0], ['cluster' => true]),
};

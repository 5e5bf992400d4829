<?php

/*
 * Loads the bridge classes without composer:
 *     require '/path/to/redislock/bridge/autoload.php';
 * (With composer, the PSR-4 mapping in bridge/composer.json does the same.)
 * The framework itself (Symfony Lock, Laravel) must be loadable already.
 */

spl_autoload_register(static function (string $class): void {
    $prefix = 'RedisLock\\Bridge\\';
    if (strncmp($class, $prefix, strlen($prefix)) !== 0) {
        return;
    }
    $file = __DIR__ . '/src/' . str_replace('\\', '/', substr($class, strlen($prefix))) . '.php';
    if (is_file($file)) {
        require $file;
    }
});

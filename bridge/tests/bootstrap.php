<?php

/*
 * PHPUnit bootstrap of the bridge tests: the extension must be loaded
 * (scripts/bridge-tests.sh passes -d extension=...), the frameworks come
 * from Debian's packages (php-symfony-lock, php-symfony-semaphore,
 * php-laravel-framework), and one private redis-server is started for the
 * whole run (TestRedis from the phpt helpers: a free loopback port,
 * stopped by pid at exit).
 */

if (!extension_loaded('redislock')) {
    fwrite(STDERR, "the redislock extension is not loaded: run bash scripts/bridge-tests.sh\n");
    exit(1);
}

require '/usr/share/php/Symfony/Component/Lock/autoload.php';
require '/usr/share/php/Symfony/Component/Semaphore/autoload.php';
require '/usr/share/php/Symfony/Contracts/Service/autoload.php';
require '/usr/share/php/Illuminate/Support/autoload.php';
require '/usr/share/php/Illuminate/Container/autoload.php';
require '/usr/share/php/Illuminate/Events/autoload.php';
require '/usr/share/php/Illuminate/Config/autoload.php';
require '/usr/share/php/Illuminate/Cache/autoload.php';
require dirname(__DIR__) . '/autoload.php';
require dirname(__DIR__, 2) . '/php-tests/config.inc';

// Symfony's own semaphore store tests (scripts/symfony-store-tests.sh
// fetches them from Debian's source package; SymfonyStoreContractTest runs
// them unchanged against the bridge's store).
$symfonyStoreTests = getenv('REDISLOCK_SYMFONY_STORE_TESTS');
if ($symfonyStoreTests === false || !is_file($symfonyStoreTests)) {
    fwrite(STDERR, "Symfony's AbstractStoreTestCase is missing: run bash scripts/bridge-tests.sh\n");
    exit(1);
}
require $symfonyStoreTests;

spl_autoload_register(static function (string $class): void {
    $prefix = 'RedisLock\\Bridge\\Tests\\';
    if (strncmp($class, $prefix, strlen($prefix)) === 0) {
        $file = __DIR__ . '/' . str_replace('\\', '/', substr($class, strlen($prefix))) . '.php';
        if (is_file($file)) {
            require $file;
        }
    }
});

/** The redis-server of this run (started once). */
function bridge_test_server(): TestRedis
{
    static $server = null;
    return $server ??= TestRedis::start(['--appendonly', 'yes']);
}

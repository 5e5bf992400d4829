<?php

/*
 * A minimal Symfony console application with the ReportCommand:
 *     php -d extension=redislock.so examples/symfony/console.php app:report [--wait] [--work=0.3]
 * The Redis URL comes from REDISLOCK_URL (default redis://127.0.0.1:6379).
 * In a full Symfony app, the store is a service instead:
 *     RedisLock\Bridge\Symfony\RedisLockStore: { arguments: ['%env(REDIS_URL)%'] }
 *     Symfony\Component\Lock\LockFactory: { arguments: ['@RedisLock\Bridge\Symfony\RedisLockStore'] }
 */

require '/usr/share/php/Symfony/Component/Console/autoload.php';
require '/usr/share/php/Symfony/Component/Lock/autoload.php';
require dirname(__DIR__, 2) . '/bridge/autoload.php';
require __DIR__ . '/ReportCommand.php';

use App\Command\ReportCommand;
use RedisLock\Bridge\Symfony\RedisLockStore;
use Symfony\Component\Console\Application;
use Symfony\Component\Lock\LockFactory;

$store = new RedisLockStore(getenv('REDISLOCK_URL') ?: 'redis://127.0.0.1:6379');
$app = new Application('redislock example');
$app->add(new ReportCommand(new LockFactory($store)));
$app->run();

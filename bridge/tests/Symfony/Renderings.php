<?php

namespace RedisLock\Bridge\Tests\Symfony;

use Symfony\Component\VarDumper\Cloner\VarCloner;
use Symfony\Component\VarDumper\Dumper\CliDumper;

// Debian's php-symfony-var-dumper (the bootstrap does not load it).
require_once '/usr/share/php/Symfony/Component/VarDumper/autoload.php';

/**
 * Every way PHP code shows an object: var_dump(), print_r(),
 * var_export(), an (array) cast (what Symfony's VarDumper reads;
 * rendered with var_export, which ignores __debugInfo), json_encode(),
 * serialize() (or why it was refused), and VarDumper's own dump.
 */
trait Renderings
{
    /** @return array<string, string> how => what it shows */
    private static function renderings(object $object): array
    {
        ob_start();
        var_dump($object);
        $varDump = (string) ob_get_clean();
        try {
            $serialized = serialize($object);
        } catch (\Throwable $e) {
            $serialized = 'refused: ' . $e::class . ': ' . $e->getMessage();
        }
        $dumper = new CliDumper();
        $dumper->setColors(false);

        return [
            'var_dump' => $varDump,
            'print_r' => print_r($object, true),
            'var_export' => var_export($object, true),
            '(array)' => var_export((array) $object, true),
            'json_encode' => (string) json_encode($object, JSON_PARTIAL_OUTPUT_ON_ERROR),
            'serialize' => $serialized,
            'VarDumper' => (string) $dumper->dump((new VarCloner())->cloneVar($object), true),
        ];
    }
}

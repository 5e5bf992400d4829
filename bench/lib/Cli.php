<?php

declare(strict_types=1);

/** --name=value options of the bench scripts; all listed names are required unless given a default. */
function cli_options(array $defaults): array
{
    $got = getopt('', array_map(fn ($n) => "$n:", array_keys($defaults)));
    $out = [];
    foreach ($defaults as $name => $default) {
        if (array_key_exists($name, $got)) {
            $out[$name] = $got[$name];
        } elseif ($default !== null) {
            $out[$name] = $default;
        } else {
            fwrite(STDERR, basename($_SERVER['argv'][0]) . ": --$name is required\n");
            exit(2);
        }
    }
    return $out;
}

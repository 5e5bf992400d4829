<?php

declare(strict_types=1);

/**
 * The contenders, in report order. `suites` says where each one runs:
 * the round-trip floor has no lock semantics (uncontended only), the
 * no-lock control only makes sense under contention.
 */
function contenders(): array
{
    $both = ['uncontended', 'contended'];
    return [
        'redislock' => ['label' => 'redislock (ext)', 'suites' => $both],
        'redislock-barging' => ['label' => 'redislock, starve_after 1 ms', 'suites' => ['contended']],
        'phpredis-eval' => ['label' => 'phpredis blog recipe (EVAL)', 'suites' => $both],
        'phpredis-evalsha' => ['label' => 'phpredis + EVALSHA', 'suites' => $both],
        'predis' => ['label' => 'Predis (EVALSHA)', 'suites' => $both],
        'symfony' => ['label' => 'Symfony Lock RedisStore', 'suites' => $both],
        'symfony-redislock' => ['label' => 'Symfony Lock RedisLockStore', 'suites' => $both],
        'laravel' => ['label' => 'Laravel RedisLock', 'suites' => $both],
        'laravel-redislock' => ['label' => 'Laravel redislock driver', 'suites' => $both],
        'floor' => ['label' => 'round-trip floor (SET+EVALSHA)', 'suites' => ['uncontended']],
        'redislock-read' => ['label' => 'redislock read hold', 'suites' => ['uncontended']],
        'redislock-permit' => ['label' => 'redislock permit (of 4)', 'suites' => ['uncontended']],
        'nolock' => ['label' => 'no lock (control)', 'suites' => ['contended']],
    ];
}

function contender_label(string $name): string
{
    return contenders()[$name]['label'] ?? $name;
}

/** Loads bench/lib/contenders/<name>.php and builds the contender for this process. */
function make_contender(string $name, Endpoint $redis): Contender
{
    if (!isset(contenders()[$name])) {
        throw new InvalidArgumentException("unknown contender \"$name\" (known: " . implode(', ', array_keys(contenders())) . ')');
    }
    $factory = require __DIR__ . "/contenders/$name.php";
    $contender = $factory($redis);
    $contender->prepare();
    return $contender;
}

/** A key no earlier run has used. */
function fresh_key(string $suite, string $name): string
{
    return sprintf('bench:%s:%s:%s', $suite, $name, bin2hex(random_bytes(6)));
}

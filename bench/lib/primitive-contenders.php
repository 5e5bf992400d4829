<?php

declare(strict_types=1);

/*
 * The contenders of the primitives suite (bench/primitives.php): a
 * semaphore of N permits and a read/write lock, each contender with the
 * framework's own API. One adapter file per contender in
 * bench/lib/primitives/, implementing the workloads listed here.
 */

/**
 * What the primitives suite runs against. One instance per PHP process (it
 * owns that process's Redis connection); each hold is a fresh object, as a
 * web request would make it. A contender implements the workloads it is
 * listed for in primitive_contenders(); the others throw LogicException.
 */
abstract class PrimitiveContender
{
    /** Releases that failed (the hold was no longer ours, or the library threw on release). */
    public int $releaseFailures = 0;

    /** Connects and loads scripts: everything that must not be measured. $workload: semaphore or rw. */
    abstract public function prepare(string $workload): void;

    /**
     * Runs $section holding one of $permits permits of $name, waiting with the
     * library's own mechanism for at most $wait seconds; false when no permit came.
     */
    public function withPermit(string $name, int $permits, float $wait, callable $section): bool
    {
        throw new LogicException(static::class . ' has no semaphore');
    }

    /** Runs $section holding a shared (read) hold of $key; false when it did not come within $wait. */
    public function withRead(string $key, float $wait, callable $section): bool
    {
        throw new LogicException(static::class . ' has no read/write lock');
    }

    /** Runs $section holding the exclusive (write) hold of $key; false when it did not come within $wait. */
    public function withWrite(string $key, float $wait, callable $section): bool
    {
        throw new LogicException(static::class . ' has no read/write lock');
    }
}

/** The workloads of the primitives suite. */
const PRIMITIVE_WORKLOADS = ['semaphore', 'rw'];

/**
 * The contenders, in report order, with a label per workload they run.
 * `peer`: a library redislock competes with (the best peer of a run is the
 * peer with the most sections/s); the bridges run on redislock and the
 * no-lock control is not a lock, so neither is a peer.
 */
function primitive_contenders(): array
{
    return [
        'redislock' => ['peer' => false, 'labels' => [
            'semaphore' => 'redislock Semaphore (ext)',
            'rw' => 'redislock acquireRead (ext)',
        ]],
        'symfony' => ['peer' => true, 'labels' => [
            'semaphore' => 'Symfony Semaphore RedisStore',
            'rw' => 'Symfony Lock RedisStore',
        ]],
        'symfony-redislock' => ['peer' => false, 'labels' => [
            'semaphore' => 'Symfony Semaphore RedisLockSemaphoreStore',
            'rw' => 'Symfony Lock RedisLockStore',
        ]],
        'laravel' => ['peer' => true, 'labels' => [
            'semaphore' => 'Laravel Redis::funnel',
        ]],
        'laravel-redislock' => ['peer' => false, 'labels' => [
            'semaphore' => 'Laravel redislock funnel',
        ]],
        'nolock' => ['peer' => false, 'control' => true, 'labels' => [
            'semaphore' => 'no limit (control)',
            'rw' => 'no lock (control)',
        ]],
    ];
}

/** Names of the contenders of $workload, in report order. */
function primitive_contender_names(string $workload): array
{
    return array_keys(array_filter(primitive_contenders(), fn ($c) => isset($c['labels'][$workload])));
}

function primitive_label(string $name, string $workload): string
{
    return primitive_contenders()[$name]['labels'][$workload] ?? $name;
}

/**
 * Loads bench/lib/primitives/<name>.php. The file returns
 * ['make' => fn (Endpoint) => PrimitiveContender, 'skip' => fn (string $workload): ?string],
 * where skip says why the contender cannot run this workload here (null: it can).
 */
function primitive_adapter(string $name): array
{
    if (!isset(primitive_contenders()[$name])) {
        throw new InvalidArgumentException("unknown contender \"$name\" (known: " . implode(', ', array_keys(primitive_contenders())) . ')');
    }
    static $loaded = [];
    return $loaded[$name] ??= require __DIR__ . "/primitives/$name.php";
}

/** Why $name cannot run $workload on this machine, or null when it can. */
function primitive_skip_reason(string $name, string $workload): ?string
{
    if (!isset(primitive_contenders()[$name]['labels'][$workload])) {
        return "$name has no $workload workload";
    }
    $adapter = primitive_adapter($name);
    return isset($adapter['skip']) ? ($adapter['skip'])($workload) : null;
}

/** The contender $name for this process, prepared for $workload. */
function make_primitive_contender(string $name, Endpoint $redis, string $workload): PrimitiveContender
{
    $contender = (primitive_adapter($name)['make'])($redis);
    $contender->prepare($workload);
    return $contender;
}

/**
 * The polling loop of a library that cannot block (Symfony Semaphore):
 * try, and on failure usleep 100 +- 10 ms (the sleep of Symfony Lock's
 * own blocking loop) until $wait seconds have passed.
 */
function poll_until(float $wait, callable $try): bool
{
    $deadline = hrtime(true) + (int) ($wait * 1e9);
    while (!$try()) {
        if (hrtime(true) >= $deadline) {
            return false;
        }
        usleep((100 + random_int(-10, 10)) * 1000);
    }
    return true;
}

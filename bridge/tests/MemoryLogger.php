<?php

declare(strict_types=1);

namespace RedisLock\Bridge\Tests;

use Psr\Log\AbstractLogger;

/**
 * A PSR-3 logger that keeps what it is given, for the log tests. It holds
 * a secret of its own (as a framework's logger holds the application or
 * a handler's token), which no dump of a bridge object may show.
 */
final class MemoryLogger extends AbstractLogger
{
    /** @var list<array{level: string, message: string, context: array<string, mixed>}> */
    public array $records = [];

    public function __construct(public readonly string $secret = 'logger-secret-token')
    {
    }

    /**
     * Keeps one record.
     *
     * @param  mixed  $level
     * @param  string|\Stringable  $message
     * @param  array<string, mixed>  $context
     */
    public function log($level, $message, array $context = []): void
    {
        $this->records[] = ['level' => (string) $level, 'message' => (string) $message, 'context' => $context];
    }

    /**
     * The records of one event (context `event`).
     *
     * @return list<array{level: string, message: string, context: array<string, mixed>}>
     */
    public function event(string $event): array
    {
        return array_values(array_filter($this->records, static fn ($r) => ($r['context']['event'] ?? null) === $event));
    }

    /** Everything logged, as one string (to look for secrets in). */
    public function dump(): string
    {
        return var_export($this->records, true);
    }
}

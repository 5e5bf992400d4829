<?php

declare(strict_types=1);

namespace RedisLock\Bridge;

/**
 * @internal how long a hold taken through a bridge has lasted, for {@see LockLog}
 *
 * Started when the acquire returned; its lease is moved by each refresh
 * through the bridge. Measured on this process's monotonic clock
 * (hrtime), which starts a little after the extension's (it counts from
 * the send of the request that won the hold): a lease over here is over
 * for the extension too.
 */
final class Hold
{
    /** When the hold was taken (hrtime, ns). */
    private int $since;

    /** When its current lease began: the acquire, or the last refresh (hrtime, ns). */
    private int $leaseStart;

    /** Whether its loss was logged already (a refresh that failed, then the release). */
    private bool $reported = false;

    /**
     * @param  string  $primitive  `lock` (a write hold), `read` or `permit`
     * @param  float|null  $ttl  its lease in seconds; null when it is renewed (auto_renew): no fixed end
     */
    public function __construct(
        public readonly string $primitive,
        private ?float $ttl,
    ) {
        $this->since = $this->leaseStart = hrtime(true);
    }

    /** The lease was set anew to $ttl seconds from now (null: renewed from now on). */
    public function extended(?float $ttl): void
    {
        $this->leaseStart = hrtime(true);
        $this->ttl = $ttl;
    }

    /** Seconds since the hold was taken. */
    public function heldFor(): float
    {
        return (hrtime(true) - $this->since) / 1e9;
    }

    /** The length of its current lease in seconds; null when it is renewed. */
    public function ttl(): ?float
    {
        return $this->ttl;
    }

    /** Whether its current lease (a fixed one) is over by now. */
    public function overran(): bool
    {
        return $this->ttl !== null && (hrtime(true) - $this->leaseStart) / 1e9 > $this->ttl;
    }

    /** Whether its loss was logged already. */
    public function reported(): bool
    {
        return $this->reported;
    }

    /** Its loss is logged: not again. */
    public function report(): void
    {
        $this->reported = true;
    }

    /** Seconds since $start (an hrtime(true) value). */
    public static function since(int $start): float
    {
        return (hrtime(true) - $start) / 1e9;
    }
}

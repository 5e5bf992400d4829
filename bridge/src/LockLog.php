<?php

declare(strict_types=1);

namespace RedisLock\Bridge;

use Psr\Log\LoggerInterface;

/**
 * What the bridges log through the framework's PSR-3 logger (Laravel's
 * `log`, the Symfony bundle's `lock` / `semaphore` monolog channels):
 *
 * | event        | level   | when                                                                        |
 * |--------------|---------|-----------------------------------------------------------------------------|
 * | `long_wait`  | notice  | an acquire waited longer than `log_wait_over` seconds (acquired or not)      |
 * | `lost_lease` | warning | a release or refresh found a hold of this process no longer ours, within its lease (taken over, deleted, a failover) |
 * | `long_hold`  | warning | a release or refresh came after the end of the hold's lease: held longer than its ttl (its lease had run out, so it is lost too, unless renewed by another means) |
 *
 * One line per release or refresh at most (a `long_hold` is not logged
 * as a `lost_lease` too, and a loss found by a refresh is not logged
 * again at the release). Holds with `auto_renew` (Laravel's `$seconds =
 * 0`) have no fixed lease: they are never a `long_hold`, but their loss
 * is a `lost_lease`. Only holds this process took through the bridge are
 * watched (not a lock restored from another process's token), and a hold
 * the request scope already ended (`RedisLock::releaseAll()`) is no loss.
 *
 * The message is plain text on one line (no `{placeholder}` left for the
 * logger to fill: a name's braces, quotes, backslashes, control characters
 * and bytes that are not UTF-8 are escaped, see {@see LockLog::shown()});
 * the context has `event`, `lock` (the name as the application
 * passes it), `primitive` (`lock`, `read` or `permit`, as in
 * `RedisLock::metrics()`), and the figures in seconds: `wait`, `timeout`
 * (null: no limit), `acquired`, `ttl` (null: renewed), `held_for`,
 * `action` (`release` or `refresh`), `lost`. Who holds the lock instead
 * is not asked (a round trip more). Never a server URL, an option or an
 * owner token. A logger that throws is ignored: logging never fails a
 * lock operation.
 *
 * Without a logger nothing is logged and no hold is tracked.
 */
final class LockLog
{
    /** The bridges' option: log waits longer than this many seconds (null: never). */
    public const OPTION = 'log_wait_over';

    /** The default of `log_wait_over`, in seconds. */
    public const WAIT_OVER = 1.0;

    /**
     * The loggers, out of every dump's reach: a framework's logger holds
     * the application (Laravel's LogManager) or handlers with tokens, which
     * var_export() of a store would print.
     *
     * @var \WeakMap<self, LoggerInterface>|null
     */
    private static ?\WeakMap $loggers = null;

    /**
     * @param  LoggerInterface|null  $logger  null: log nothing
     * @param  float|null  $waitOver  log waits longer than this many seconds; null: never
     */
    /** @var array<string, true> the servers (and reasons) this process logged as unsafe */
    private static array $unsafeLogged = [];

    /** The process that logged them (a forked child starts again). */
    private static int|false|null $unsafePid = null;

    public function __construct(?LoggerInterface $logger = null, private readonly ?float $waitOver = self::WAIT_OVER)
    {
        $this->setLogger($logger);
    }

    /**
     * The value of `log_wait_over` in $options (the default when absent).
     *
     * @param  array<array-key, mixed>  $options  a store's options
     * @param  class-string<\InvalidArgumentException>  $exception  thrown on a bad value
     *
     * @throws \InvalidArgumentException of class $exception when it is not null or a number of seconds, 0 or more
     */
    public static function waitOver(#[\SensitiveParameter] array $options, string $exception = \InvalidArgumentException::class, string $store = 'redislock'): ?float
    {
        if (!array_key_exists(self::OPTION, $options)) {
            return self::WAIT_OVER;
        }
        $value = $options[self::OPTION];
        if ($value === null || $value === false) {
            return null;
        }
        if (!is_int($value) && !is_float($value) && !(is_string($value) && is_numeric($value))) {
            throw new $exception(sprintf('%s: option "%s" must be a number of seconds (0 or more) or null (never), %s given', $store, self::OPTION, get_debug_type($value)));
        }
        $seconds = (float) $value;
        if (!($seconds >= 0.0) || is_nan($seconds)) {
            throw new $exception(sprintf('%s: option "%s" must be a number of seconds, 0 or more (null: never)', $store, self::OPTION));
        }

        return $seconds;
    }

    /** Logs through $logger from now on (null: nothing). */
    public function setLogger(?LoggerInterface $logger): void
    {
        self::$loggers ??= new \WeakMap();
        if ($logger === null) {
            unset(self::$loggers[$this]);
        } else {
            self::$loggers[$this] = $logger;
        }
    }

    /** The logger, or null. */
    public function logger(): ?LoggerInterface
    {
        return self::$loggers[$this] ?? null;
    }

    /** Whether anything is logged (there is a logger). */
    public function enabled(): bool
    {
        return isset(self::$loggers[$this]);
    }

    /** The threshold of `long_wait` in seconds; null: never. */
    public function waitOverSeconds(): ?float
    {
        return $this->waitOver;
    }

    /**
     * A hold for {@see ended()}, when there is a logger.
     *
     * @param  float|null  $ttl  its lease; null: renewed
     */
    public function hold(string $primitive, ?float $ttl): ?Hold
    {
        return $this->enabled() ? new Hold($primitive, $ttl) : null;
    }

    /**
     * An acquire that waited $wait seconds: a `long_wait` when that is
     * over the threshold.
     *
     * @param  float|null  $timeout  the longest wait asked for; null: no limit
     * @param  float|null  $ttl  the lease it asked for; null: renewed
     */
    public function waited(string $primitive, string $name, float $wait, ?float $timeout, bool $acquired, ?float $ttl): void
    {
        if ($this->waitOver === null || !($wait > $this->waitOver) || !$this->enabled()) {
            return;
        }
        $this->write('notice', sprintf(
            'redislock: waited %s s for %s%s',
            self::seconds($wait),
            self::what($primitive, $name),
            $acquired ? '' : sprintf(' and gave up (timeout %s s)', self::seconds((float) $timeout)),
        ), [
            'event' => 'long_wait',
            'lock' => $name,
            'primitive' => $primitive,
            'wait' => round($wait, 6),
            'timeout' => $timeout,
            'acquired' => $acquired,
            'ttl' => $ttl,
            'log_wait_over' => $this->waitOver,
        ]);
    }

    /**
     * An `unsafe_server` warning for each server (and reason) the
     * extension found able to lose a held lock by itself (option
     * unsafe_server "warn": an evicting maxmemory, no append-only file),
     * once per process: `RedisLock::unsafeServers()`, read after each
     * acquire (no round trip; an empty list almost always).
     */
    public function unsafeServers(): void
    {
        if (!$this->enabled() || !method_exists(\RedisLock::class, 'unsafeServers')) {
            return;
        }
        $pid = getmypid();
        if (self::$unsafePid !== $pid) {
            // A forked child's extension starts its list again: so does its log.
            [self::$unsafeLogged, self::$unsafePid] = [[], $pid];
        }
        foreach (\RedisLock::unsafeServers() as $found) {
            $id = $found['server'] . "\n" . $found['reason'];
            if (isset(self::$unsafeLogged[$id])) {
                continue;
            }
            self::$unsafeLogged[$id] = true;
            $this->write('warning', sprintf(
                'redislock: the Redis server %s can lose a held lock by itself (%s): %s',
                self::shown($found['server']),
                $found['reason'],
                self::shown($found['detail']),
            ), [
                'event' => 'unsafe_server',
                'server' => $found['server'],
                'reason' => $found['reason'],
                'detail' => $found['detail'],
            ]);
        }
    }

    /**
     * A release or refresh of a hold has ended: a `long_hold` when it came
     * after the end of the hold's lease, else a `lost_lease` when it found
     * the hold no longer ours. Nothing for a hold this process did not
     * take ($hold null), nor for one the request scope ended already
     * ($wasHeld false: the extension no longer counted it as held).
     *
     * @param  string  $action  `release` or `refresh`
     * @param  bool  $wasHeld  whether the extension's object still held it before the call
     * @param  bool  $ok  what the release or refresh returned
     */
    public function ended(string $name, string $action, ?Hold $hold, bool $wasHeld, bool $ok): void
    {
        if ($hold === null || $hold->reported() || !$wasHeld || !$this->enabled()) {
            return;
        }
        $overran = $hold->overran();
        if (!$overran && $ok) {
            return;
        }
        $heldFor = $hold->heldFor();
        $ttl = $hold->ttl();
        $context = [
            'event' => $overran ? 'long_hold' : 'lost_lease',
            'lock' => $name,
            'primitive' => $hold->primitive,
            'action' => $action,
            'held_for' => round($heldFor, 6),
            'ttl' => $ttl,
            'lost' => !$ok,
        ];
        if (!$ok) {
            $hold->report();
        }
        if ($overran) {
            $this->write('warning', sprintf(
                'redislock: %s was held %s s, longer than its ttl of %s s; %s',
                self::what($hold->primitive, $name),
                self::seconds($heldFor),
                self::seconds((float) $ttl),
                $ok ? sprintf('it was still ours at its %s', $action) : sprintf('its lease had run out before its %s', $action),
            ), $context);

            return;
        }
        $this->write('warning', sprintf(
            'redislock: %s was no longer ours at its %s, %s s after it was taken (%s): another holder took it or it was deleted',
            self::what($hold->primitive, $name),
            $action,
            self::seconds($heldFor),
            $ttl === null ? 'renewed lease' : 'ttl ' . self::seconds($ttl) . ' s',
        ), $context);
    }

    /**
     * Whether the extension's object holds a lock, read hold or permit
     * now, by its own account (no round trip; false once the request
     * scope ended it).
     */
    public static function holdsHere(\RedisLock|\RedisLock\Semaphore $primitive): bool
    {
        return (bool) ($primitive->__debugInfo()['acquired'] ?? false);
    }

    /** @param array<string, mixed> $context */
    private function write(string $level, string $message, array $context): void
    {
        try {
            $this->logger()?->log($level, $message, $context);
        } catch (\Throwable) {
            // A failing log handler never fails the lock operation.
        }
    }

    /** How a message names the hold. */
    private static function what(string $primitive, string $name): string
    {
        $name = self::shown($name);

        return match ($primitive) {
            'read' => sprintf('the read lock "%s"', $name),
            'permit' => sprintf('a permit of the semaphore "%s"', $name),
            default => sprintf('the lock "%s"', $name),
        };
    }

    /**
     * A name as a message shows it: plain, one line, nothing a logger
     * fills in. A backslash, a quote and the braces of a PSR-3
     * placeholder (`{event}`) are escaped with a backslash, control
     * characters and bytes that are not UTF-8 as `\n`, `\t`, `\xHH`.
     * The context's `lock` keeps the name as given.
     */
    public static function shown(string $name): string
    {
        $out = '';
        foreach (preg_split('//u', $name, -1, PREG_SPLIT_NO_EMPTY) ?: str_split($name) as $char) {
            $out .= match (true) {
                $char === '\\' || $char === '"' || $char === '{' || $char === '}' => '\\' . $char,
                $char === "\n" => '\\n',
                $char === "\r" => '\\r',
                $char === "\t" => '\\t',
                strlen($char) === 1 && (ord($char) < 0x20 || ord($char) >= 0x7f) => sprintf('\\x%02x', ord($char)),
                default => $char,
            };
        }

        return $out;
    }

    /** Seconds with at most 3 decimals, trailing zeros dropped. */
    private static function seconds(float $seconds): string
    {
        $text = rtrim(rtrim(sprintf('%.3f', $seconds), '0'), '.');

        return $text === '' || $text === '-0' ? '0' : $text;
    }

    /**
     * What var_dump() shows: whether there is a logger (its class), and
     * the threshold.
     *
     * @return array<string, mixed>
     */
    public function __debugInfo(): array
    {
        $logger = $this->logger();

        return ['logger' => $logger === null ? null : $logger::class, self::OPTION => $this->waitOver];
    }
}

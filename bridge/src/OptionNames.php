<?php

namespace RedisLock\Bridge;

/**
 * @internal the extension's option names, and the refusal of unknown ones
 *
 * The stores of both bridges refuse an unknown option name when they are
 * built, naming the nearest valid one (levenshtein), so a typo (`'prefx'`)
 * fails at construction, not at the first acquire(). The names come from the
 * extension itself (what its ValueError for an unknown option lists), so
 * an option added to the extension is accepted without a bridge update;
 * {@see FALLBACK} when that message cannot be read. The bridges' own
 * options ({@see BRIDGE}) are accepted too, and taken out before the
 * extension sees the options ({@see withoutBridge()}).
 */
final class OptionNames
{
    /** The extension's options as the README's "Options" lists them. */
    public const FALLBACK = [
        'prefix', 'auto_release', 'auto_renew', 'max_hold', 'fencing', 'retry_delay',
        'connect_timeout', 'read_timeout', 'cluster', 'sentinel', 'sentinel_user',
        'sentinel_password', 'replicas', 'drift_factor', 'tls_verify', 'tls_ca', 'tls_cert',
        'tls_key', 'on_lost', 'reentrant', 'owner', 'unsafe_server', 'starve_after',
    ];

    /**
     * Options of the bridges' stores that are not the extension's: read by
     * the bridge, never passed to the extension.
     * - `log_wait_over`: log a wait longer than this many seconds ({@see LockLog}).
     */
    public const BRIDGE = [LockLog::OPTION];

    /** @var list<string>|null */
    private static ?array $known = null;

    /**
     * The option names the extension accepts, asked once per process:
     * building a RedisLock with an option no one would name sends nothing
     * to Redis, and its ValueError lists the known ones.
     *
     * @return list<string>
     */
    public static function all(): array
    {
        if (self::$known !== null) {
            return self::$known;
        }
        if (!class_exists(\RedisLock::class)) {
            return self::FALLBACK;   // a container built where the extension is not loaded
        }
        try {
            new \RedisLock('probe', 1.0, 'redis://127.0.0.1:6379', ["\0?" => true]);
        } catch (\ValueError $e) {
            if (preg_match('/unknown option ".*" \(known: ([a-z_, ]+)\)/s', $e->getMessage(), $m)) {
                return self::$known = explode(', ', $m[1]);
            }
        }

        return self::$known = self::FALLBACK;
    }

    /**
     * Throws $exception when $options has a key that is not an option.
     *
     * @param string                                  $store        the store's short name, for the message
     * @param class-string<\InvalidArgumentException> $exception    the component's InvalidArgumentException
     * @param array<array-key, mixed>                 $options      the options given to the store
     * @param list<string>                            $notSuggested options the store refuses itself
     *
     * @throws \InvalidArgumentException of class $exception: `unknown option "prefx" (did you mean "prefix"?)`
     */
    public static function refuseUnknown(string $store, string $exception, #[\SensitiveParameter] array $options, array $notSuggested = []): void
    {
        $known = [...self::all(), ...self::BRIDGE];
        foreach (array_keys($options) as $name) {
            $name = (string) $name;
            if (in_array($name, $known, true)) {
                continue;
            }
            $valid = array_values(array_diff($known, $notSuggested));
            throw new $exception(sprintf(
                '%s: unknown option "%s" (did you mean "%s"?). Valid options: %s.',
                $store,
                $name,
                self::nearest($name, $valid)[0],
                implode(', ', $valid),
            ));
        }
    }

    /**
     * $options without the bridges' own options ({@see BRIDGE}): what the
     * extension is given.
     *
     * @param  array<array-key, mixed>  $options
     * @return array<array-key, mixed>
     */
    public static function withoutBridge(#[\SensitiveParameter] array $options): array
    {
        return array_diff_key($options, array_flip(self::BRIDGE));
    }

    /**
     * The nearest of $names to $name by levenshtein distance (the first
     * one on a tie), compared without case, and that distance.
     *
     * @param non-empty-list<string> $names
     *
     * @return array{0: string, 1: int}
     */
    public static function nearest(string $name, array $names): array
    {
        $best = $names[0];
        $distance = PHP_INT_MAX;
        foreach ($names as $candidate) {
            $d = levenshtein(strtolower($name), $candidate);
            if ($d < $distance) {
                [$best, $distance] = [$candidate, $d];
            }
        }

        return [$best, $distance];
    }
}

<?php

namespace RedisLock\Bridge;

/**
 * What the bridges show of their configuration in var_dump(), print_r()
 * and logs: server URLs masked by the extension itself (the same masking
 * as RedisLock's own var_dump and messages), secret options and owner
 * labels replaced by `***`. One place, so no bridge masks differently.
 */
final class Masked
{
    /** Options whose values are never shown. */
    private const SECRET_OPTIONS = ['sentinel_password', 'owner'];

    /**
     * The servers as the extension shows them: passwords masked, whatever
     * they contain (`/`, `@`, `:`), and a user name without a password
     * masked too (it is most often a password without its `:`).
     *
     * @param  string|array<int, string>|null  $servers  as for `new RedisLock()`
     * @param  array<string, mixed>  $options  the options the servers are used with (cluster, sentinel, ...)
     * @return array<int, string>|string  the masked servers, or why they are not valid (also masked)
     */
    public static function servers(#[\SensitiveParameter] string|array|null $servers, #[\SensitiveParameter] array $options = []): array|string
    {
        try {
            // Validates and masks; sends nothing to Redis.
            $probe = new \RedisLock('masked', 1.0, $servers, array_intersect_key($options, array_flip(
                ['cluster', 'sentinel', 'sentinel_user', 'sentinel_password', 'tls_verify', 'tls_ca', 'tls_cert', 'tls_key']
            )));

            return $probe->__debugInfo()['servers'];
        } catch (\Throwable $e) {
            // The extension's messages never show a password either.
            return 'invalid: ' . $e->getMessage();
        }
    }

    /**
     * Options with the values of secret ones (sentinel_password, owner)
     * replaced by `***`.
     *
     * @param  array<string, mixed>  $options
     * @return array<string, mixed>
     */
    public static function options(#[\SensitiveParameter] array $options): array
    {
        foreach (self::SECRET_OPTIONS as $name) {
            if (isset($options[$name])) {
                $options[$name] = '***';
            }
        }

        return $options;
    }

    /** An owner label or token, never shown. */
    public static function owner(#[\SensitiveParameter] ?string $owner): ?string
    {
        return $owner === null ? null : '***';
    }
}

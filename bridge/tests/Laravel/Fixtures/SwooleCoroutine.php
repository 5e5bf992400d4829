<?php

/*
 * A stand-in with Swoole's coroutine API names (Swoole cannot be installed
 * here): getCid() is -1 outside a coroutine, the coroutine's id inside
 * one; sleep() yields to "the other coroutines", which a test sets as
 * $onSleep, and records how long it was asked to sleep.
 */

namespace Swoole;

if (!class_exists(Coroutine::class, false)) {
    final class Coroutine
    {
        public static int $cid = -1;

        /** @var list<float> */
        public static array $slept = [];

        /** @var (callable(): void)|null */
        public static $onSleep = null;

        public static function getCid(): int
        {
            return self::$cid;
        }

        public static function sleep(float $seconds): bool
        {
            self::$slept[] = $seconds;
            usleep((int) ($seconds * 1e6));
            if (self::$onSleep !== null) {
                (self::$onSleep)();
            }
            return true;
        }
    }
}

<?php

/*
 * Stand-ins for Laravel Octane's termination events, with their exact
 * class names (Octane is not installed here). Octane's own classes carry
 * the application, sandbox and request; the provider's listener uses none
 * of it, so empty classes are enough to prove that the listener is
 * registered under those names and ends the request scope.
 */

namespace Laravel\Octane\Events;

if (!class_exists(RequestTerminated::class, false)) {
    final class RequestTerminated
    {
    }
}

if (!class_exists(TaskTerminated::class, false)) {
    final class TaskTerminated
    {
    }
}

if (!class_exists(TickTerminated::class, false)) {
    final class TickTerminated
    {
    }
}

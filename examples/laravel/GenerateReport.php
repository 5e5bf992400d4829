<?php

namespace App\Jobs;

use Illuminate\Bus\Queueable;
use Illuminate\Contracts\Queue\ShouldQueue;
use Illuminate\Queue\InteractsWithQueue;
use Illuminate\Support\Facades\Cache;

/**
 * A queued job that must not run twice at once for the same day, however
 * many workers pick it up: the usual Laravel code, unchanged. Only the
 * cache store behind Cache::lock() uses the `redislock` driver, so block()
 * is woken by the holder's release instead of retrying every 250 ms, and
 * throws LockTimeoutException (the job fails and is retried) after 10 s.
 */
class GenerateReport implements ShouldQueue
{
    use InteractsWithQueue, Queueable;

    public function __construct(public string $day)
    {
    }

    public function handle(): void
    {
        $asked = microtime(true);
        // A 60 s lease (if this worker dies, the lock frees itself); wait up to 10 s.
        Cache::lock('report:' . $this->day, 60)->block(10, function () use ($asked) {
            $this->say(sprintf('got the lock after %.0f ms, generating the report of %s', (microtime(true) - $asked) * 1000, $this->day));
            usleep(300_000); // the work
            $this->say('done, releasing');
        }); // block() releases the lock when the callback returns (or throws)
    }

    private function say(string $message): void
    {
        printf("%s [worker %d] %s\n", (new \DateTime())->format('H:i:s.v'), getmypid(), $message);
    }
}

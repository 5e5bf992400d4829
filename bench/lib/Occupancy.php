<?php

declare(strict_types=1);

/**
 * Who is inside, for the primitives suite: a shared file that every
 * section updates on entry and exit, under flock(2), so the count is exact
 * whatever the lock under test does.
 *
 * Layout: three 12-digit fields. Offset 0: holders (semaphore permits, or
 * readers), offset 12: writers (both under flock), offset 24: the writers'
 * counter, read and written WITHOUT flock around usleep($hold) (two writers
 * inside at once lose an update, as in the main suite's critical section).
 */
final class OccupancyFile
{
    /** Section kinds, as logged. */
    public const PERMIT = 0;
    public const READ = 1;
    public const WRITE = 2;

    /** @var resource */
    private $file;

    /** Highest number of holders (semaphore) or readers (rw) seen inside at once, entry included. */
    public int $maxHolders = 0;
    /** Entries that broke the read/write rule: a write with anyone inside, a read with a writer inside. */
    public int $rwViolations = 0;

    public static function create(): string
    {
        $path = tempnam(sys_get_temp_dir(), 'bench-occupancy-');
        file_put_contents($path, sprintf('%012d%012d%012d', 0, 0, 0));
        return $path;
    }

    public function __construct(string $path)
    {
        $this->file = fopen($path, 'r+');
        stream_set_read_buffer($this->file, 0);
        stream_set_write_buffer($this->file, 0);
    }

    public function enter(int $kind): void
    {
        $this->update(function (int $holders, int $writers) use ($kind): array {
            if ($kind === self::WRITE) {
                if ($holders > 0 || $writers > 0) {
                    $this->rwViolations++;
                }
                return [$holders, $writers + 1];
            }
            if ($kind === self::READ && $writers > 0) {
                $this->rwViolations++;
            }
            $this->maxHolders = max($this->maxHolders, $holders + 1);
            return [$holders + 1, $writers];
        });
    }

    public function leave(int $kind): void
    {
        $this->update(fn (int $holders, int $writers) => $kind === self::WRITE ? [$holders, $writers - 1] : [$holders - 1, $writers]);
    }

    /** A writer's work: counter + 1 around usleep($us), without flock. */
    public function writeCounter(int $us): void
    {
        fseek($this->file, 24);
        $value = (int) fread($this->file, 12);
        usleep($us);
        fseek($this->file, 24);
        fwrite($this->file, sprintf('%012d', $value + 1));
    }

    /** A reader's work: read the counter, usleep($us). */
    public function readCounter(int $us): void
    {
        fseek($this->file, 24);
        fread($this->file, 12);
        usleep($us);
    }

    public static function counter(string $path): int
    {
        return (int) substr((string) file_get_contents($path), 24, 12);
    }

    private function update(callable $change): void
    {
        flock($this->file, LOCK_EX);
        fseek($this->file, 0);
        $fields = (string) fread($this->file, 24);
        [$holders, $writers] = $change((int) substr($fields, 0, 12), (int) substr($fields, 12, 12));
        fseek($this->file, 0);
        fwrite($this->file, sprintf('%012d%012d', $holders, $writers));
        flock($this->file, LOCK_UN);
    }
}

/**
 * The same questions answered from the merged hrtime log (records
 * [pid, t_call, t_enter, t_exit, kind], CLOCK_MONOTONIC): a check that does
 * not depend on the flock counter. Section intervals are taken inside the
 * hold, so they can only understate what the lock allowed.
 */
final class OccupancyLog
{
    /**
     * @return array{max_holders: int, max_readers: int, write_overlaps: int}
     *   max_holders: most sections inside at once (any kind); max_readers: most
     *   reads inside at once; write_overlaps: writes whose interval meets any other
     */
    public static function analyze(array $records): array
    {
        $events = [];
        $readEvents = [];
        foreach ($records as [, , $enter, $exit, $kind]) {
            $events[] = [$enter, 1];
            $events[] = [$exit, -1];
            if ($kind === OccupancyFile::READ) {
                $readEvents[] = [$enter, 1];
                $readEvents[] = [$exit, -1];
            }
        }
        $peak = function (array $events): int {
            // At equal times an exit comes first: touching intervals do not overlap.
            usort($events, fn ($a, $b) => $a[0] <=> $b[0] ?: $a[1] <=> $b[1]);
            $inside = $max = 0;
            foreach ($events as [, $delta]) {
                $inside += $delta;
                $max = max($max, $inside);
            }
            return $max;
        };

        usort($records, fn ($a, $b) => $a[2] <=> $b[2]);
        $writeOverlaps = 0;
        foreach ($records as $i => [, , $enter, $exit, $kind]) {
            if ($kind !== OccupancyFile::WRITE) {
                continue;
            }
            foreach ($records as $j => [, , $otherEnter, $otherExit]) {
                if ($otherEnter >= $exit) {
                    break; // sorted by entry: nothing later can meet this write
                }
                if ($j !== $i && $otherExit > $enter) {
                    $writeOverlaps++;
                    break;
                }
            }
        }
        return ['max_holders' => $peak($events), 'max_readers' => $peak($readEvents), 'write_overlaps' => $writeOverlaps];
    }
}

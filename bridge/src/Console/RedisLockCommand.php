<?php

namespace RedisLock\Bridge\Console;

use Symfony\Component\Console\Command\Command;
use Symfony\Component\Console\Input\InputArgument;
use Symfony\Component\Console\Input\InputInterface;
use Symfony\Component\Console\Input\InputOption;
use Symfony\Component\Console\Output\ConsoleOutputInterface;
use Symfony\Component\Console\Output\OutputInterface;
use Symfony\Component\Console\Output\StreamOutput;

/**
 * `redislock:inspect`, `redislock:release`, `redislock:watch`,
 * `redislock:metrics` and `redislock:doctor` as console commands (`bin/console`, registered by
 * the Symfony bundle; `php artisan`, registered by the Laravel provider):
 * the command line's commands ({@see Cli}) on the application's
 * configured locks, or on `--servers` / `--prefix` when given.
 * `redislock:metrics` without `--url` shows the console process's own
 * figures, not the web servers' pool: give it the metrics route's URL.
 */
final class RedisLockCommand extends Command
{
    /** The verbs, with their descriptions. */
    public const VERBS = [
        'inspect' => 'Shows who holds a lock: mode, owners, ttl, readers, waiting, the semaphore of the name',
        'release' => 'Deletes a lock whoever holds it (needs --force)',
        'watch' => 'Prints who holds a lock, a line per interval',
        'metrics' => 'Prints RedisLock::metrics() (this process\'s, or a pool\'s with --url), or its wait histograms as SVG',
        'doctor' => 'Checks every Redis server under the locks: can it lose a held lock by itself, what it has of the protocol\'s needs',
    ];

    private string $verb;

    private ?Target $target;

    /**
     * @param  string  $verb  inspect, release, watch, metrics or doctor
     * @param  Target|null  $target  the application's locks; null: ini redislock.servers
     */
    public function __construct(string $verb, ?Target $target = null)
    {
        if (!isset(self::VERBS[$verb])) {
            throw new \InvalidArgumentException(sprintf('no redislock command "%s" (one of %s)', $verb, implode(', ', array_keys(self::VERBS))));
        }
        $this->verb = $verb;
        $this->target = $target;
        parent::__construct('redislock:' . $verb);
    }

    protected function configure(): void
    {
        $this->setDescription(self::VERBS[$this->verb]);
        if ($this->verb === 'metrics') {
            $this->addOption('url', null, InputOption::VALUE_REQUIRED, "the metrics route of a PHP-FPM pool (default: \$REDISLOCK_METRICS_URL, else this process's own figures)")
                ->addOption('url-file', null, InputOption::VALUE_REQUIRED, "a file whose first line is the route's URL (a password there stays out of ps)")
                ->addOption('timeout', null, InputOption::VALUE_REQUIRED, "how long the route's whole answer may take, in seconds (default 10)")
                ->addOption('file', null, InputOption::VALUE_REQUIRED, 'a saved exposition (- : standard input)')
                ->addOption('svg', null, InputOption::VALUE_OPTIONAL, 'the wait-time histograms as SVG, to the output or to this file', false);
            return;
        }
        $this->addArgument('name', $this->verb === 'doctor' ? InputArgument::OPTIONAL : InputArgument::REQUIRED,
            $this->verb === 'doctor' ? 'a lock whose keys the ACL is asked about (default ' . Cli::DOCTOR_NAME . ')' : 'the lock name, as the application passes it')
            ->addOption('servers', null, InputOption::VALUE_REQUIRED | InputOption::VALUE_IS_ARRAY,
                "a Redis URL (repeat it for Redlock); default: the application's configuration")
            ->addOption('servers-file', null, InputOption::VALUE_REQUIRED, 'a file of Redis URLs, one a line (a password there stays out of ps)')
            ->addOption('prefix', null, InputOption::VALUE_REQUIRED, 'the key prefix (option "prefix"), with --servers');
        match ($this->verb) {
            'inspect' => $this->addOption('json', null, InputOption::VALUE_NONE, 'what RedisLock::inspect() returns, as JSON'),
            'doctor' => $this->addOption('json', null, InputOption::VALUE_NONE, 'what RedisLock::diagnose() returns, as JSON'),
            'release' => $this->addOption('force', null, InputOption::VALUE_NONE, 'delete it, whoever holds it'),
            'watch' => $this->addOption('interval', null, InputOption::VALUE_REQUIRED, 'seconds between lines', '1')
                ->addOption('count', null, InputOption::VALUE_REQUIRED, 'stop after this many lines'),
        };
    }

    protected function execute(InputInterface $input, OutputInterface $output): int
    {
        if ($this->verb === 'metrics') {
            $svg = $input->getOption('svg');
            $flags = array_filter([
                'url' => $input->getOption('url'),
                'url-file' => $input->getOption('url-file'),
                'timeout' => $input->getOption('timeout'),
                'file' => $input->getOption('file'),
                'svg' => $svg === false ? null : ($svg ?? true),   // --svg alone: null
            ], static fn ($v) => $v !== null);
            return $this->runCli('', $flags, $output);
        }
        $flags = array_filter([
            'servers' => $input->getOption('servers') ?: null,
            'servers-file' => $input->getOption('servers-file'),
            'prefix' => $input->getOption('prefix'),
            'json' => in_array($this->verb, ['inspect', 'doctor'], true) ? $input->getOption('json') : null,
            'force' => $this->verb === 'release' ? $input->getOption('force') : null,
            'interval' => $this->verb === 'watch' ? $input->getOption('interval') : null,
            'count' => $this->verb === 'watch' ? $input->getOption('count') : null,
        ], static fn ($v) => $v !== null && $v !== false);
        return $this->runCli((string) ($input->getArgument('name') ?? ''), $flags, $output);
    }

    /**
     * Runs the verb through {@see Cli} on $output.
     *
     * @param  array<string, mixed>  $flags
     */
    private function runCli(string $name, #[\SensitiveParameter] array $flags, OutputInterface $output): int
    {
        $error = $output instanceof ConsoleOutputInterface ? $output->getErrorOutput() : $output;
        [$out, $err] = [self::stream($output), self::stream($error)];
        $status = (new Cli($out[0], $err[0], $this->target))->execute($this->verb, $name, $flags);
        foreach ([[$out, $output], [$err, $error]] as [[$stream, $buffered], $to]) {
            if ($buffered) {
                rewind($stream);
                $to->write((string) stream_get_contents($stream));
            }
        }
        return $status;
    }

    /**
     * The stream behind $output (lines appear as they are printed, for
     * watch), else a buffer written to $output at the end.
     *
     * @return array{0: resource, 1: bool} the stream, and whether it is a buffer
     */
    private static function stream(OutputInterface $output): array
    {
        return $output instanceof StreamOutput ? [$output->getStream(), false] : [fopen('php://temp', 'w+'), true];
    }
}

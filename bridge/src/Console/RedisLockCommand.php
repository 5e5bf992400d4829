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
 * `redislock:inspect`, `redislock:release` and `redislock:watch` as
 * console commands (`bin/console`, registered by the Symfony bundle;
 * `php artisan`, registered by the Laravel provider): the command line's
 * commands ({@see Cli}) on the application's configured locks, or on
 * `--servers` / `--prefix` when given.
 */
final class RedisLockCommand extends Command
{
    /** The verbs, with their descriptions. */
    public const VERBS = [
        'inspect' => 'Shows who holds a lock: mode, owners, ttl, readers, waiting, the semaphore of the name',
        'release' => 'Deletes a lock whoever holds it (needs --force)',
        'watch' => 'Prints who holds a lock, a line per interval',
    ];

    private string $verb;

    private ?Target $target;

    /**
     * @param  string  $verb  inspect, release or watch
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
        $this->setDescription(self::VERBS[$this->verb])
            ->addArgument('name', InputArgument::REQUIRED, 'the lock name, as the application passes it')
            ->addOption('servers', null, InputOption::VALUE_REQUIRED | InputOption::VALUE_IS_ARRAY,
                "a Redis URL (repeat it for Redlock); default: the application's configuration")
            ->addOption('prefix', null, InputOption::VALUE_REQUIRED, 'the key prefix (option "prefix"), with --servers');
        match ($this->verb) {
            'inspect' => $this->addOption('json', null, InputOption::VALUE_NONE, 'what RedisLock::inspect() returns, as JSON'),
            'release' => $this->addOption('force', null, InputOption::VALUE_NONE, 'delete it, whoever holds it'),
            'watch' => $this->addOption('interval', null, InputOption::VALUE_REQUIRED, 'seconds between lines', '1')
                ->addOption('count', null, InputOption::VALUE_REQUIRED, 'stop after this many lines'),
        };
    }

    protected function execute(InputInterface $input, OutputInterface $output): int
    {
        $flags = array_filter([
            'servers' => $input->getOption('servers') ?: null,
            'prefix' => $input->getOption('prefix'),
            'json' => $this->verb === 'inspect' ? $input->getOption('json') : null,
            'force' => $this->verb === 'release' ? $input->getOption('force') : null,
            'interval' => $this->verb === 'watch' ? $input->getOption('interval') : null,
            'count' => $this->verb === 'watch' ? $input->getOption('count') : null,
        ], static fn ($v) => $v !== null && $v !== false);
        $error = $output instanceof ConsoleOutputInterface ? $output->getErrorOutput() : $output;
        [$out, $err] = [self::stream($output), self::stream($error)];
        $status = (new Cli($out[0], $err[0], $this->target))->execute($this->verb, (string) $input->getArgument('name'), $flags);
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

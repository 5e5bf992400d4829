<?php

namespace App\Command;

use Symfony\Component\Console\Command\Command;
use Symfony\Component\Console\Input\InputInterface;
use Symfony\Component\Console\Input\InputOption;
use Symfony\Component\Console\Output\OutputInterface;
use Symfony\Component\Lock\LockFactory;

/**
 * A console command that must never run twice at once (a nightly report,
 * a cache warm-up): the usual Symfony code, unchanged. Only the store
 * given to the LockFactory is redislock's, so `--wait` is woken by the
 * other run's release instead of polling every 100 ms, and a run that
 * dies with a fatal error frees the lock at request end.
 */
final class ReportCommand extends Command
{
    protected static $defaultName = 'app:report';

    public function __construct(private LockFactory $locks)
    {
        parent::__construct();
    }

    protected function configure(): void
    {
        $this->addOption('wait', null, InputOption::VALUE_NONE, 'wait for a running report instead of giving up')
            ->addOption('work', null, InputOption::VALUE_REQUIRED, 'seconds of work', '0.3');
    }

    protected function execute(InputInterface $input, OutputInterface $output): int
    {
        $lock = $this->locks->createLock('report:nightly', 60);
        if (!$lock->acquire((bool) $input->getOption('wait'))) {
            $output->writeln(sprintf('[%d] another report is running, giving up', getmypid()));
            return Command::FAILURE;
        }
        try {
            $output->writeln(sprintf('[%d] generating the report', getmypid()));
            usleep((int) ((float) $input->getOption('work') * 1e6));
            $output->writeln(sprintf('[%d] done', getmypid()));
            return Command::SUCCESS;
        } finally {
            $lock->release();
        }
    }
}

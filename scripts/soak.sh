#!/usr/bin/env bash
# Memory soak (not part of scripts/test.sh): SOAK_CYCLES acquire/release
# cycles in one PHP process on a private redis-server, a fresh RedisLock
# object per cycle; samples the process's RSS (VmRSS in /proc/self/status)
# after SOAK_WARMUP cycles and at the end (and every SOAK_SAMPLE cycles in
# between). Prints cycles, duration, RSS at warm-up and at the end, growth;
# exits non-zero when RSS grew by SOAK_MAX_GROWTH_KB (1024) or more, or any
# acquire or release failed.
#
#   bash scripts/soak.sh                       # 1,000,000 cycles, warm-up 50,000
#   SOAK_CYCLES=200000 SOAK_WARMUP=20000 bash scripts/soak.sh
#   SOAK_OPTIONS='["auto_renew" => true, "fencing" => true]' bash scripts/soak.sh
#   SOAK_SO=path/to/redislock.so               (default target/release/redislock.so)
set -euo pipefail
cd "$(dirname "$0")/.."

source scripts/redis.sh
redis_session "${SOAK_SO:-target/release/redislock.so}"

cat >"$WORK/soak.php" <<'PHP'
<?php
$url = $argv[1];
$cycles = (int) getenv('SOAK_CYCLES');
$warmup = (int) getenv('SOAK_WARMUP');
$sample = (int) getenv('SOAK_SAMPLE');
$maxGrowthKb = (int) getenv('SOAK_MAX_GROWTH_KB');
$options = eval('return ' . (getenv('SOAK_OPTIONS') ?: '[]') . ';');

function rss_kb(): int
{
    preg_match('/^VmRSS:\s+(\d+) kB/m', file_get_contents('/proc/self/status'), $m);
    return (int) $m[1];
}

$key = 'soak:' . getmypid();
$failures = 0;
$rssWarm = null;
$t0 = hrtime(true);
$tWarm = $t0;
for ($i = 1; $i <= $cycles; $i++) {
    $lock = new RedisLock($key, 10.0, $url, $options);
    if (!$lock->acquire()) {
        $failures++;
    } elseif (!$lock->release()) {
        $failures++;
    }
    unset($lock);
    if ($i === $warmup) {
        gc_collect_cycles();
        $rssWarm = rss_kb();
        $tWarm = hrtime(true);
        printf("soak: warm-up done after %d cycles: RSS %d kB\n", $i, $rssWarm);
    } elseif ($rssWarm !== null && $sample > 0 && $i % $sample === 0 && $i !== $cycles) {
        printf("soak: %8d cycles: RSS %d kB (%+d kB since warm-up)\n", $i, rss_kb(), rss_kb() - $rssWarm);
    }
}
gc_collect_cycles();
$rssEnd = rss_kb();
$seconds = (hrtime(true) - $t0) / 1e9;
$rssWarm ??= $rssEnd;
$growth = $rssEnd - $rssWarm;
$measured = max(1, $cycles - $warmup);
printf("soak: %d cycles in %.1f s (%.1f us/cycle), %d failed acquire/release\n",
    $cycles, $seconds, $seconds * 1e6 / $cycles, $failures);
printf("soak: RSS after warm-up (%d cycles) %d kB, at the end %d kB, growth %+d kB (%.3f bytes/cycle over %d cycles)\n",
    $warmup, $rssWarm, $rssEnd, $growth, $growth * 1024 / $measured, $measured);
printf("soak: PHP memory_get_usage %d bytes, peak %d bytes\n", memory_get_usage(), memory_get_peak_usage());
$ok = $failures === 0 && $growth < $maxGrowthKb;
echo $ok ? "soak: OK (growth < $maxGrowthKb kB)\n" : "soak: FAILED\n";
exit($ok ? 0 : 1);
PHP

export SOAK_CYCLES=${SOAK_CYCLES:-1000000}
export SOAK_WARMUP=${SOAK_WARMUP:-50000}
export SOAK_SAMPLE=${SOAK_SAMPLE:-100000}
export SOAK_MAX_GROWTH_KB=${SOAK_MAX_GROWTH_KB:-1024}
export SOAK_OPTIONS=${SOAK_OPTIONS:-[]}
echo "soak: $SOAK_CYCLES acquire/release cycles (fresh RedisLock each, options $SOAK_OPTIONS)" \
  "on a private redis-server, warm-up $SOAK_WARMUP"
php -n -d "extension=$SO" "$WORK/soak.php" "redis://127.0.0.1:$REDIS_PORT"

<?php
/* Answers RedisLock::stats() of this worker, after sleeping sleep_ms (to spread requests sent at once over the workers). */
require __DIR__ . '/common.inc';
usleep((int) param('sleep_ms', '0') * 1000);
answer(['stats' => RedisLock::stats()]);

<?php
/* Answers RedisLock::stats('process'): this worker's own figures. */
require __DIR__ . '/common.inc';
answer(['stats' => RedisLock::stats('process')]);

<?php

declare(strict_types=1);

/**
 * The blog recipe with phpredis: SET key token NX PX ttl, and EVAL of the
 * full compare-and-delete script on every release. Blocks with SET NX +
 * usleep(10 ms).
 */
final class PhpredisEvalContender extends PhpredisRecipe
{
    public function release(): bool
    {
        return $this->redis->eval(RELEASE_LUA, [$this->key, $this->token], 1) === 1;
    }
}

return fn (Endpoint $redis) => new PhpredisEvalContender($redis);

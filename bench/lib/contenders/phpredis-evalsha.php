<?php

declare(strict_types=1);

/**
 * The blog recipe with the release script loaded once (SCRIPT LOAD in
 * prepare) and run with EVALSHA. Blocks with SET NX + usleep(10 ms).
 */
final class PhpredisEvalshaContender extends PhpredisRecipe
{
    private string $sha = '';

    public function prepare(): void
    {
        parent::prepare();
        $this->sha = $this->redis->script('load', RELEASE_LUA);
    }

    public function release(): bool
    {
        return $this->redis->evalSha($this->sha, [$this->key, $this->token], 1) === 1;
    }
}

return fn (Endpoint $redis) => new PhpredisEvalshaContender($redis);

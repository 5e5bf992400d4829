--TEST--
stubs/redislock.stub.php declares exactly what the extension exports
--EXTENSIONS--
redislock
--FILE--
<?php
require __DIR__ . '/../signature.inc';
$ext = new ReflectionExtension('redislock');
$exported = array_keys($ext->getClasses());
sort($exported);
$expected = REDISLOCK_CLASSES;
sort($expected);
var_dump($exported === $expected);
var_dump($ext->getFunctions() === []);

$fromExtension = redislock_describe(REDISLOCK_CLASSES);
// The same description of the stub, in a PHP without the extension.
$code = 'require ' . var_export(__DIR__ . '/../signature.inc', true) . ';'
      . 'require ' . var_export(dirname(__DIR__, 2) . '/stubs/redislock.stub.php', true) . ';'
      . 'echo redislock_describe(REDISLOCK_CLASSES);';
$fromStub = shell_exec(escapeshellarg(PHP_BINARY) . ' -n -r ' . escapeshellarg($code) . ' 2>&1');
if ($fromStub === $fromExtension) {
    echo "stub matches\n";
} else {
    echo "--- extension\n$fromExtension--- stub\n$fromStub";
}
echo $fromExtension;
?>
--EXPECT--
bool(true)
bool(true)
stub matches
final class RedisLock extends -
  private function __clone()
  public function __construct(string $key, ?float $ttl = NULL, #[\SensitiveParameter] array|string|null $servers = NULL, #[\SensitiveParameter] array $options = array (
))
  public function __debugInfo(): array
  public function acquire(float $wait = 0.0): bool
  public function acquireRead(float $wait = 0.0): bool
  static public function diagnose(string $key, #[\SensitiveParameter] array|string|null $servers = NULL, #[\SensitiveParameter] array $options = array (
)): array
  public function fencingToken(): ?int
  public function forceRelease(): bool
  static public function inspect(string $key, #[\SensitiveParameter] array|string|null $servers = NULL, #[\SensitiveParameter] array $options = array (
)): array
  public function isAcquired(): bool
  public function isLocked(): bool
  public function key(): string
  static public function metrics(): string
  public function refresh(?float $ttl = NULL): bool
  public function release(): bool
  static public function releaseAll(): int
  public function remainingTtl(): ?float
  static public function restore(string $key, #[\SensitiveParameter] string $token, ?float $ttl = NULL, #[\SensitiveParameter] array|string|null $servers = NULL, #[\SensitiveParameter] array $options = array (
)): RedisLock
  static public function stats(?string $scope = NULL): array
  public function token(): ?string
  static public function unsafeServers(): array
  public function withLock(callable $callback, float $wait = 0.0): mixed
class RedisLock\LockException extends RuntimeException
class RedisLock\ConnectionException extends RedisLock\LockException
class RedisLock\TimeoutException extends RedisLock\LockException
class RedisLock\LockLostException extends RedisLock\LockException
final class RedisLock\Semaphore extends -
  private function __clone()
  public function __construct(string $name, int $permits, ?float $ttl = NULL, #[\SensitiveParameter] array|string|null $servers = NULL, #[\SensitiveParameter] array $options = array (
))
  public function __debugInfo(): array
  public function acquire(float $wait = 0.0, int $count = 1): bool
  public function isAcquired(): bool
  public function refresh(?float $ttl = NULL): bool
  public function release(): bool
  public function remainingTtl(): ?float
  public function withPermit(callable $callback, float $wait = 0.0, int $count = 1): mixed

--TEST--
options validation: unknown and integer keys, wrong value types, out-of-range values, tls_cert without tls_key, Cluster and Sentinel settings
--EXTENSIONS--
redislock
--FILE--
<?php
require __DIR__ . '/../config.inc';
$url = 'redis://127.0.0.1:1';
function show(array $options, $servers = 'redis://127.0.0.1:1'): void
{
    show_outcome(fn () => new RedisLock('k', 5, $servers, $options));
}
echo "-- unknown / integer keys\n";
show(['ttl' => 5]);
show(['Prefix' => 'x']);
show([0 => 'x']);
show(['prefix' => 'x', 7 => true]);
echo "-- wrong types\n";
show(['prefix' => []]);
show(['retry_delay' => 'abc']);
show(['auto_release' => []]);
show(['read_timeout' => new stdClass()]);
show(['tls_ca' => []]);
show(['max_hold' => 'soon']);
echo "-- out of range\n";
show(['connect_timeout' => 0]);
show(['read_timeout' => -1]);
show(['retry_delay' => NAN]);
show(['max_hold' => INF]);
show(['drift_factor' => 0.7]);
show(['drift_factor' => 0.5]);
show(['drift_factor' => -0.01]);
show(['sentinel' => '']);
show(['replicas' => -1]);
show(['replicas' => 1.5]);
show(['replicas' => 'two']);
echo "-- combinations\n";
show(['tls_cert' => '/tmp/c.pem']);
show(['tls_key' => '/tmp/k.pem']);
echo "-- Cluster\n";
show(['cluster' => true]);
show(['cluster' => true], ['redis://127.0.0.1:1/3']);
show(['cluster' => true], ['unix:///tmp/redis.sock']);
show(['cluster' => true, 'sentinel' => 'mymaster']);
echo "-- Sentinel\n";
show(['sentinel' => 'mymaster']);
show(['sentinel' => 'mymaster', 'sentinel_user' => 'watcher', 'sentinel_password' => 'pw']);
show(['sentinel_password' => 'pw']);
echo "-- Redlock\n";
show([], ['redis://127.0.0.1:1', 'redis://127.0.0.1:2']);
show(['fencing' => true], ['redis://127.0.0.1:1', 'redis://127.0.0.1:2']);
show([], ['redis://127.0.0.1:1', 'redis://127.0.0.1:1/0']);
show([], ['redis://127.0.0.1:1', 'redis://127.0.0.1:2', 'redis://127.0.0.1:3']);
show(['replicas' => 1], ['redis://127.0.0.1:1', 'redis://127.0.0.1:2', 'redis://127.0.0.1:3']);
show(['replicas' => 2]);
echo "-- valid\n";
show(['prefix' => 'p:', 'auto_release' => false, 'auto_renew' => false, 'max_hold' => null,
      'fencing' => false, 'retry_delay' => 0.01, 'connect_timeout' => 1, 'read_timeout' => 0.5,
      'cluster' => false, 'sentinel' => null, 'drift_factor' => 0.0, 'tls_verify' => false,
      'tls_ca' => null, 'tls_cert' => '/tmp/c.pem', 'tls_key' => '/tmp/k.pem']);
// A key that cannot carry a hash tag is refused on Cluster only.
foreach ([[], ['cluster' => true]] as $options) {
    try {
        new RedisLock('}k', 5, $url, $options);
        echo "accepted\n";
    } catch (ValueError $e) {
        echo get_class($e), ': ', $e->getMessage(), "\n";
    }
}
?>
--EXPECT--
-- unknown / integer keys
ValueError: RedisLock::__construct(): Argument #4 ($options) contains unknown option "ttl" (known: prefix, auto_release, auto_renew, max_hold, fencing, retry_delay, connect_timeout, read_timeout, cluster, sentinel, sentinel_user, sentinel_password, replicas, drift_factor, tls_verify, tls_ca, tls_cert, tls_key, on_lost, reentrant, owner, unsafe_server, starve_after)
ValueError: RedisLock::__construct(): Argument #4 ($options) contains unknown option "Prefix" (known: prefix, auto_release, auto_renew, max_hold, fencing, retry_delay, connect_timeout, read_timeout, cluster, sentinel, sentinel_user, sentinel_password, replicas, drift_factor, tls_verify, tls_ca, tls_cert, tls_key, on_lost, reentrant, owner, unsafe_server, starve_after)
ValueError: RedisLock::__construct(): Argument #4 ($options) must have option names as keys, found integer key 0
ValueError: RedisLock::__construct(): Argument #4 ($options) must have option names as keys, found integer key 7
-- wrong types
TypeError: RedisLock::__construct(): Argument #4 ($options) option "prefix" must be of type string, array given
TypeError: RedisLock::__construct(): Argument #4 ($options) option "retry_delay" must be of type float, string given
TypeError: RedisLock::__construct(): Argument #4 ($options) option "auto_release" must be of type bool, array given
TypeError: RedisLock::__construct(): Argument #4 ($options) option "read_timeout" must be of type float, stdClass given
TypeError: RedisLock::__construct(): Argument #4 ($options) option "tls_ca" must be of type ?string, array given
TypeError: RedisLock::__construct(): Argument #4 ($options) option "max_hold" must be of type ?float, string given
-- out of range
ValueError: RedisLock::__construct(): Argument #4 ($options) option "connect_timeout" must be greater than 0
ValueError: RedisLock::__construct(): Argument #4 ($options) option "read_timeout" must be greater than 0
ValueError: RedisLock::__construct(): Argument #4 ($options) option "retry_delay" must be a number, NaN given
ValueError: RedisLock::__construct(): Argument #4 ($options) option "max_hold" must be finite
ValueError: RedisLock::__construct(): Argument #4 ($options) option "drift_factor" must be at least 0 and less than 0.5
ValueError: RedisLock::__construct(): Argument #4 ($options) option "drift_factor" must be at least 0 and less than 0.5
ValueError: RedisLock::__construct(): Argument #4 ($options) option "drift_factor" must be at least 0 and less than 0.5
ValueError: RedisLock::__construct(): Argument #4 ($options) option "sentinel" must not be empty
ValueError: RedisLock::__construct(): Argument #4 ($options) option "replicas" must be a whole number from 0 to 1000
ValueError: RedisLock::__construct(): Argument #4 ($options) option "replicas" must be a whole number from 0 to 1000
TypeError: RedisLock::__construct(): Argument #4 ($options) option "replicas" must be of type int, string given
-- combinations
ValueError: RedisLock::__construct(): Argument #4 ($options) must set tls_cert and tls_key together
ValueError: RedisLock::__construct(): Argument #4 ($options) must set tls_cert and tls_key together
-- Cluster
accepted
ValueError: RedisLock::__construct(): Argument #3 ($servers) selects database 3 in "redis://127.0.0.1:1/3", but a Redis Cluster has only database 0
ValueError: RedisLock::__construct(): Argument #3 ($servers) names a unix socket, but Redis Cluster nodes are reached over TCP
ValueError: RedisLock::__construct(): Argument #4 ($options) cannot set both cluster and sentinel
-- Sentinel
accepted
accepted
ValueError: RedisLock::__construct(): Argument #4 ($options) sets sentinel_user or sentinel_password without sentinel
-- Redlock
accepted
RedisLock\LockException: option "fencing" is not available over several servers (Redlock): each server counts on its own, so no token would be strictly greater than every earlier one; use one server, Sentinel or Cluster for fencing
ValueError: RedisLock::__construct(): Argument #3 ($servers) names one server twice (redis://127.0.0.1:1/0 and redis://127.0.0.1:1/0); Redlock needs independent servers
accepted
RedisLock\LockException: option "replicas" is not available over several servers (Redlock): each master stands alone, a quorum of masters is what keeps a lock; use it with one server, Sentinel or Cluster
accepted
-- valid
accepted
accepted
ValueError: RedisLock::__construct(): Argument #1 ($key) cannot be given a Redis Cluster hash tag (it starts with "}"); put the part to hash in {braces} yourself

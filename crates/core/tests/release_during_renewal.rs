//! A lease that its holder releases on purpose is never counted lost, even
//! when a renewal round was on its way at that moment and its "not ours any
//! more" reply comes after the release (`stats()` `lost_leases`, and the
//! lost-lease hook behind `on_lost => 'interrupt'`).
//!
//! Deterministic ([`ended_on_purpose`]): the renewal thread's first round
//! goes through a proxy that holds every reply back 300 ms; the holder
//! releases as soon as that round's connection is accepted, so the server
//! runs the release first and the renewal's refresh after it.

mod common;
mod ended_on_purpose;

use std::time::Duration;

use common::proxy::Proxy;
use common::{RedisServer, unique_key, wait_until};
use ended_on_purpose::{install_counting_host, lost_hook_calls, renewed_with_hook};
use redislock_core::{Lock, stats};

#[test]
fn a_renewal_in_flight_at_a_release_does_not_count_a_lost_lease() {
    install_counting_host();
    let server = RedisServer::start();
    let proxy = Proxy::start(&server);
    let key = unique_key("release-during-renewal");
    let options = renewed_with_hook();
    let url = format!("{}/1", proxy.url());
    // Renewed at 1 s; a round may wait for its replies until about 2 s.
    let mut lock = Lock::new(key.clone(), 3.0, &[url], options).unwrap();
    assert!(lock.acquire(Duration::ZERO).unwrap());
    let accepted = proxy.accepted();
    let evalsha = server.calls("evalsha");
    proxy.delay(Duration::from_millis(300));
    wait_until(
        "the renewal thread connects",
        Duration::from_secs(3),
        || proxy.accepted() > accepted,
    );
    let before = stats::snapshot(stats::Scope::Process).total();
    assert!(lock.release().unwrap(), "released on purpose");
    // The release, then the renewal's refresh, which finds the key gone.
    wait_until(
        "the refresh reaches the server",
        Duration::from_secs(3),
        || server.calls("evalsha") >= evalsha + 2,
    );
    // Its reply comes 300 ms later; then the renewal thread reads it.
    std::thread::sleep(Duration::from_millis(600));
    let after = stats::snapshot(stats::Scope::Process).total();
    assert_eq!(
        after.lost_leases, before.lost_leases,
        "a lease ended by a release is not lost"
    );
    assert_eq!(after.renewals, before.renewals);
    assert_eq!(lost_hook_calls(), 0, "no lost-lease hook");
    assert_eq!(after.releases, before.releases + 1);
}

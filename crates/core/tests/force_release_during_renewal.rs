//! A lock that its holder force-releases while a renewal round is on its
//! way counts no lost lease and raises no lost-lease hook, as a release
//! (`stats()` `lost_leases`, `on_lost => 'interrupt'`): the holder stops
//! renewing before it sends the `DEL`.
//!
//! Deterministic over three masters ([`ended_on_purpose`]): masters 0 and
//! 1 behind proxies that hold every reply back 300 ms, master 2 behind one
//! that swallows everything (a frozen master). The holder force-releases
//! as soon as the renewal round's connection to master 0 is accepted: its
//! `DEL` runs at once on masters 0 and 1, then the call waits for master 2
//! until the read timeout (3 s). The round sends its refresh once its
//! connections are set up (master 2's fails at the connect timeout,
//! 0.5 s), finds the key gone on 0 and 1, a quorum, and reads that about
//! 0.8 s into the round: long before the `DEL`'s call ends. A hold whose
//! renewal stops only after the `DEL` was counted lost.

mod common;
mod ended_on_purpose;

use std::time::Duration;

use common::proxy::Proxy;
use common::{RedisServer, unique_key, wait_until};
use ended_on_purpose::{install_counting_host, lost_hook_calls, renewed_with_hook};
use redislock_core::{Lock, OptionValue, stats};

#[test]
fn a_renewal_in_flight_at_a_force_release_does_not_count_a_lost_lease() {
    install_counting_host();
    let servers: Vec<RedisServer> = (0..3).map(|_| RedisServer::start()).collect();
    let proxies: Vec<Proxy> = servers.iter().map(Proxy::start).collect();
    let urls: Vec<String> = proxies.iter().map(|p| format!("{}/1", p.url())).collect();
    let key = unique_key("force-release-during-renewal");
    let mut options = renewed_with_hook();
    options
        .set("connect_timeout", OptionValue::Number(0.5))
        .unwrap();
    options
        .set("read_timeout", OptionValue::Number(3.0))
        .unwrap();
    // Renewed at 2 s; a round may wait for its replies until about 4 s.
    let mut lock = Lock::new(key.clone(), 6.0, &urls, options).unwrap();
    assert!(lock.acquire(Duration::ZERO).unwrap());
    let accepted = proxies[0].accepted();
    let evalsha: Vec<u64> = servers.iter().map(|s| s.calls("evalsha")).collect();
    proxies[0].delay(Duration::from_millis(300));
    proxies[1].delay(Duration::from_millis(300));
    proxies[2].black_hole();
    wait_until(
        "the renewal thread connects",
        Duration::from_secs(5),
        || proxies[0].accepted() > accepted,
    );
    let before = stats::snapshot(stats::Scope::Process).total();
    assert!(lock.force_release().unwrap(), "deleted on masters 0 and 1");
    let after = stats::snapshot(stats::Scope::Process).total();
    assert_eq!(
        after.lost_leases, before.lost_leases,
        "a lease ended by a force-release is not lost"
    );
    assert_eq!(lost_hook_calls(), 0, "no lost-lease hook");
    assert_eq!(after.renewals, before.renewals);
    // The round went on: its refresh reached masters 0 and 1 (after the
    // DEL, their SELECT held back) and found no key.
    let name = String::from_utf8(key).unwrap();
    for (server, evalsha) in servers[..2].iter().zip(evalsha) {
        assert_eq!(server.calls("evalsha"), evalsha + 1, "the refresh");
        assert_eq!(server.cmd::<i64>(&["EXISTS", &name]), 0);
    }
}

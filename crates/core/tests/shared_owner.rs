//! Two lock objects with the same `owner` (the same token), as Laravel's
//! owner or the Symfony store's: the second one's lost try must never undo
//! the first one's hold. A lost try is undone only on the servers where it
//! may have written (it said "taken by us", or gave no reply), never where
//! the key already held that token.

mod common;

use std::time::Duration;

use common::{RedisServer, never, unique_key};
use redislock_core::{Lock, LockOptions, OptionValue};

fn masters(n: usize) -> Vec<RedisServer> {
    (0..n).map(|_| RedisServer::start()).collect()
}

fn urls(servers: &[RedisServer]) -> Vec<String> {
    servers.iter().map(RedisServer::url).collect()
}

/// Options of a lock that competes like another process (what the bridges
/// use) under the fixed owner `owner`.
fn owned_by(owner: &str) -> LockOptions {
    let mut options = LockOptions::default();
    options
        .set("owner", OptionValue::Text(owner.as_bytes().to_vec()))
        .unwrap();
    options.set("reentrant", OptionValue::Bool(false)).unwrap();
    options
}

/// The value of `key` on each server (None: no key).
fn values(servers: &[RedisServer], key: &[u8]) -> Vec<Option<String>> {
    let key = String::from_utf8_lossy(key).into_owned();
    servers
        .iter()
        .map(|s| s.cmd::<Option<String>>(&["GET", &key]))
        .collect()
}

fn set(server: &RedisServer, key: &[u8], value: &str) {
    let key = String::from_utf8_lossy(key).into_owned();
    let _: () = server.cmd(&["SET", &key, value, "PX", "10000"]);
}

/// Both objects on `servers`: the first holds, the second's tries (once,
/// then blocking) lose, and the first's hold stays on every server.
fn second_loses_without_undoing_the_first(servers: &[RedisServer], name: &str) {
    let key = unique_key(name);
    let urls = urls(servers);
    let mut first = Lock::new(key.clone(), 10.0, &urls, owned_by("worker-1")).unwrap();
    let mut second = Lock::new(key.clone(), 10.0, &urls, owned_by("worker-1")).unwrap();
    let held = vec![Some("worker-1".to_owned()); servers.len()];
    assert!(first.acquire(Duration::ZERO, &never).unwrap());

    assert!(!second.acquire(Duration::ZERO, &never).unwrap());
    assert_eq!(values(servers, &key), held, "a lost try undid nothing");
    assert!(first.is_acquired().unwrap());

    assert!(!second.acquire(Duration::from_millis(300), &never).unwrap());
    assert_eq!(values(servers, &key), held, "a lost wait undid nothing");
    assert!(first.is_acquired().unwrap());

    // Once more: a try after the wait finds the hold where it was.
    assert!(!second.acquire(Duration::ZERO, &never).unwrap());
    assert!(first.release().unwrap());
    assert_eq!(values(servers, &key), vec![None; servers.len()]);
}

#[test]
fn redlock_a_shared_owner_never_undoes_the_holder() {
    let servers = masters(3);
    second_loses_without_undoing_the_first(&servers, "shared-owner-redlock");
}

#[test]
fn single_server_a_shared_owner_never_undoes_the_holder() {
    let servers = masters(1);
    second_loses_without_undoing_the_first(&servers, "shared-owner-single");
}

/// A split vote: the try takes the free masters only, is undone there, and
/// the masters where the key held the same token before keep it.
#[test]
fn redlock_a_split_try_is_undone_only_where_it_wrote() {
    let servers = masters(5);
    let key = unique_key("shared-owner-split");
    // Master 2 holds our token already (another object, another process),
    // masters 3 and 4 someone else's; 0 and 1 are free.
    set(&servers[2], &key, "worker-1");
    set(&servers[3], &key, "other");
    set(&servers[4], &key, "other");
    let mut lock = Lock::new(key.clone(), 10.0, &urls(&servers), owned_by("worker-1")).unwrap();
    let ours = || Some("worker-1".to_owned());
    let other = || Some("other".to_owned());
    assert!(!lock.acquire(Duration::ZERO, &never).unwrap());
    assert_eq!(
        values(&servers, &key),
        [None, None, ours(), other(), other()],
        "undone on 0 and 1 only"
    );

    // One free master: undone there alone.
    set(&servers[1], &key, "other");
    assert!(!lock.acquire(Duration::ZERO, &never).unwrap());
    assert_eq!(
        values(&servers, &key),
        [None, other(), ours(), other(), other()]
    );

    // The blocking path too.
    assert!(!lock.acquire(Duration::from_millis(200), &never).unwrap());
    assert_eq!(
        values(&servers, &key),
        [None, other(), ours(), other(), other()]
    );
}

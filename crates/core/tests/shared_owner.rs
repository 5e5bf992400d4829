//! Two lock objects with the same `owner` (the same token), as Laravel's
//! owner or the Symfony store's: the second one's lost try must never undo
//! the first one's hold. A lost try is undone only on the servers where it
//! may have written (it said "taken by us", or gave no reply), never where
//! the key already held that token.

mod common;

use std::cell::Cell;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use common::{RedisServer, unique_key, wait_until};
use redislock_core::host::{self, Host};
use redislock_core::testing::protocol::keys;
use redislock_core::{Lock, LockError, LockOptions, OptionValue};

thread_local! {
    /// Ends the blocking waits of this thread (as a PHP signal handler
    /// that throws does).
    static END_WAITS: Cell<bool> = const { Cell::new(false) };
}

/// Ends the waits of the thread named "handed-waiter".
static END_HANDED_WAITER: AtomicBool = AtomicBool::new(false);

fn wait_should_end() -> bool {
    END_WAITS.with(Cell::get)
        || (std::thread::current().name() == Some("handed-waiter")
            && END_HANDED_WAITER.load(Ordering::Relaxed))
}

fn install_host() {
    host::install(Host {
        context: || 0,
        wait_should_end,
        time_limit_hit: || false,
        lease_lost: || {},
    });
}

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
    assert!(first.acquire(Duration::ZERO).unwrap());

    assert!(!second.acquire(Duration::ZERO).unwrap());
    assert_eq!(values(servers, &key), held, "a lost try undid nothing");
    assert!(first.is_acquired().unwrap());

    assert!(!second.acquire(Duration::from_millis(300)).unwrap());
    assert_eq!(values(servers, &key), held, "a lost wait undid nothing");
    assert!(first.is_acquired().unwrap());

    // Once more: a try after the wait finds the hold where it was.
    assert!(!second.acquire(Duration::ZERO).unwrap());
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
    assert!(!lock.acquire(Duration::ZERO).unwrap());
    assert_eq!(
        values(&servers, &key),
        [None, None, ours(), other(), other()],
        "undone on 0 and 1 only"
    );

    // One free master: undone there alone.
    set(&servers[1], &key, "other");
    assert!(!lock.acquire(Duration::ZERO).unwrap());
    assert_eq!(
        values(&servers, &key),
        [None, other(), ours(), other(), other()]
    );

    // The blocking path too.
    assert!(!lock.acquire(Duration::from_millis(200)).unwrap());
    assert_eq!(
        values(&servers, &key),
        [None, other(), ours(), other(), other()]
    );
}

/// One server: a waiter whose wait PHP ends (a signal handler threw) while
/// it sleeps leaves the queue, and frees the lock only if it was handed
/// to it: here the lock holds the same token for the first object.
#[test]
fn single_server_an_ended_wait_never_undoes_the_holder() {
    install_host();
    let server = RedisServer::start();
    let key = unique_key("shared-owner-ended-wait");
    let urls = urls(std::slice::from_ref(&server));
    let mut first = Lock::new(key.clone(), 10.0, &urls, owned_by("worker-1")).unwrap();
    let mut second = Lock::new(key.clone(), 10.0, &urls, owned_by("worker-1")).unwrap();
    assert!(first.acquire(Duration::ZERO).unwrap());
    END_WAITS.with(|end| end.set(true));
    let waited = second.acquire(Duration::from_secs(5));
    END_WAITS.with(|end| end.set(false));
    assert!(matches!(waited, Err(LockError::Interrupted)), "{waited:?}");
    let left = values(std::slice::from_ref(&server), &key);
    assert_eq!(left, [Some("worker-1".to_owned())], "the holder keeps it");
    assert!(first.is_acquired().unwrap());
    assert!(first.release().unwrap());
}

/// The other side of the rule: a waiter whose wait PHP ends after a release
/// handed it the lock (its mark says so) frees the lock, so it never stays
/// with a waiter that is gone.
#[test]
fn single_server_an_ended_wait_frees_a_lock_handed_to_it() {
    install_host();
    let server = RedisServer::start();
    let key = unique_key("shared-owner-handed");
    let name = String::from_utf8(key.clone()).unwrap();
    let queue = String::from_utf8(keys::queue_key(&key)).unwrap();
    let mark = format!("{name}~~a~waiter-1");
    let urls = urls(std::slice::from_ref(&server));
    let mut holder = Lock::new(key.clone(), 10.0, &urls, LockOptions::default()).unwrap();
    assert!(holder.acquire(Duration::ZERO).unwrap());
    let waiter = std::thread::Builder::new()
        .name("handed-waiter".into())
        .spawn(move || {
            let mut options = owned_by("waiter-1");
            // One long sleep on the wake-up list: no step until PHP ends it.
            options
                .set("retry_delay", OptionValue::Number(5.0))
                .unwrap();
            let mut lock = Lock::new(key, 10.0, &urls, options).unwrap();
            lock.acquire(Duration::from_secs(5))
        })
        .unwrap();
    wait_until("the waiter queues", Duration::from_secs(5), || {
        server.cmd::<i64>(&["ZCARD", &queue]) == 1
    });
    // What a release's hand-over does (lib/queue.lua), without the wake-up.
    let _: () = server.cmd(&["SET", &name, "waiter-1", "PX", "10000"]);
    let _: () = server.cmd(&["SET", &mark, "h", "PX", "10000"]);
    let _: i64 = server.cmd(&["ZREM", &queue, "waiter-1"]);
    END_HANDED_WAITER.store(true, Ordering::Relaxed);
    let waited = waiter.join().unwrap();
    assert!(matches!(waited, Err(LockError::Interrupted)), "{waited:?}");
    assert_eq!(server.cmd::<Option<String>>(&["GET", &name]), None, "freed");
    assert_eq!(server.cmd::<i64>(&["EXISTS", &mark]), 0);
}

/// A fixed owner's release held up in flight must never delete the same
/// owner's next hold (issue 36; every Laravel lock has an owner). L1's
/// release request is held back 2 s in the network: it times out
/// (`read_timeout` 0.3 s) and stays pending; the pending thread's resend
/// (another connection) is answered and frees the key; L2, another object
/// with the same owner, takes the lock; then the first copy reaches Redis.
/// At da6b638 its compare-and-delete matched the owner and deleted L2's
/// hold while L2 believed it held the lock: the release must prove more
/// than the owner string.
#[test]
fn a_delayed_release_never_deletes_the_same_owners_next_hold() {
    use redislock_core::testing::protocol::scripts::RELEASE;
    let server = RedisServer::start();
    let proxy = common::proxy::Proxy::start(&server);
    let key = unique_key("owner-delayed-release");
    let mut options = owned_by("job-42");
    options
        .set("read_timeout", OptionValue::Number(0.3))
        .unwrap();
    let url = [proxy.url()];
    let mut l1 = Lock::new(key.clone(), 10.0, &url, options.clone()).unwrap();
    assert!(l1.acquire(Duration::ZERO).unwrap());
    proxy.delay_request_to_all(&[RELEASE.hash().as_bytes(), &key], Duration::from_secs(2));
    let released = std::time::Instant::now();
    let first = l1.release();
    assert!(first.is_err(), "L1's release must time out: {first:?}");
    wait_until("the resend frees the key", Duration::from_secs(5), || {
        values(std::slice::from_ref(&server), &key) == [None]
    });
    let mut l2 = Lock::new(key.clone(), 10.0, &url, options).unwrap();
    assert!(l2.acquire(Duration::ZERO).unwrap(), "L2 takes the lock");
    // The first copy reaches Redis 2 s after it was sent.
    std::thread::sleep(Duration::from_millis(2_400).saturating_sub(released.elapsed()));
    assert!(
        !proxy.delay_armed(),
        "L1's release was the request held back"
    );
    let left = values(std::slice::from_ref(&server), &key);
    println!("after L1's delayed release reached Redis: {left:?}");
    assert_eq!(
        left,
        [Some("job-42".to_owned())],
        "L1's delayed release deleted L2's hold (same owner)"
    );
    assert!(l2.is_acquired().unwrap());
    assert!(l2.release().unwrap());
}

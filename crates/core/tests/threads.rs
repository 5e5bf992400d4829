//! Holds belong to the request of the thread that took them (a ZTS PHP runs
//! several requests at once, one per thread): another thread competes for
//! a held key like another process, never joins the hold, and its request
//! end (`release_all`, `end_request_scope`) ends only its own holds. An
//! object moved to another thread (possible in Rust, never in PHP) still
//! reaches its own hold.

mod common;

use std::sync::{Arc, Barrier};
use std::time::Duration;

use common::{RedisServer, exists, lock, unique_key};
use redislock_core::{Semaphore, end_request_scope, release_all};

#[test]
fn another_thread_competes_and_its_request_end_leaves_ours() {
    let server = Arc::new(RedisServer::start());
    let key = unique_key("thread");
    let mut ours = lock(&server, &key, 10.0);
    assert!(ours.acquire(Duration::ZERO).unwrap());
    let token = ours.token();

    let other = {
        let (server, key) = (server.clone(), key.clone());
        std::thread::spawn(move || {
            // Reentrant by default, yet it does not join our hold.
            let mut theirs = lock(&server, &key, 10.0);
            let got = theirs.acquire(Duration::ZERO).unwrap();
            let mut own = lock(&server, &unique_key("thread-own"), 10.0);
            assert!(own.acquire(Duration::ZERO).unwrap());
            // Its request end: only its own hold.
            let released = release_all();
            let scope = end_request_scope();
            (got, released, scope, own.token())
        })
    };
    let (got, released, scope, own_token) = other.join().unwrap();
    assert!(!got, "another thread competes like another process");
    assert_eq!(released, 1, "its request end released its own hold only");
    assert_eq!(scope, 0);
    assert_eq!(own_token, None);
    assert!(exists(&server, &key), "our hold survived its request end");
    assert_eq!(ours.token(), token);
    assert!(ours.is_acquired().unwrap());
    // Reentrancy on our own thread is unchanged.
    let mut again = lock(&server, &key, 10.0);
    assert!(again.acquire(Duration::ZERO).unwrap());
    assert_eq!(again.token(), token);
    assert_eq!(release_all(), 1);
    assert!(!exists(&server, &key));
}

#[test]
fn threads_exclude_each_other_on_one_key() {
    let server = Arc::new(RedisServer::start());
    let key = unique_key("thread-mutex");
    let threads = 4;
    let rounds = 10;
    let start = Arc::new(Barrier::new(threads));
    let inside = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let handles: Vec<_> = (0..threads)
        .map(|_| {
            let (server, key, start, inside) =
                (server.clone(), key.clone(), start.clone(), inside.clone());
            std::thread::spawn(move || {
                start.wait();
                for _ in 0..rounds {
                    let mut l = lock(&server, &key, 10.0);
                    assert!(l.acquire(Duration::from_secs(20)).unwrap());
                    let n = inside.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                    assert_eq!(n, 0, "two threads inside at once");
                    std::thread::sleep(Duration::from_millis(2));
                    inside.fetch_sub(1, std::sync::atomic::Ordering::SeqCst);
                    assert!(l.release().unwrap());
                }
            })
        })
        .collect();
    for h in handles {
        h.join().unwrap();
    }
    assert!(!exists(&server, &key));
}

#[test]
fn a_moved_object_reaches_its_hold_and_its_thread_ends_it() {
    let server = Arc::new(RedisServer::start());
    let key = unique_key("moved");
    let name = unique_key("moved-sem");
    let (mut l, mut s) = {
        let (server, key, name) = (server.clone(), key.clone(), name.clone());
        std::thread::spawn(move || {
            let mut l = lock(&server, &key, 10.0);
            assert!(l.acquire(Duration::ZERO).unwrap());
            let mut s = Semaphore::new(
                name,
                1,
                10.0,
                &[server.url()],
                redislock_core::LockOptions::default(),
            )
            .unwrap();
            assert!(s.acquire(Duration::ZERO).unwrap());
            (l, s)
        })
        .join()
        .unwrap()
    };
    // Not this thread's request: its end leaves them alone.
    assert_eq!(release_all(), 0);
    assert!(l.is_acquired().unwrap());
    assert!(s.is_acquired().unwrap());
    assert!(l.release().unwrap(), "the object still reaches its hold");
    assert!(s.release().unwrap());
    assert!(!exists(&server, &key));
}

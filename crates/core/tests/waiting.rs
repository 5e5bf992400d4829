//! Blocked acquires: queued waiters are woken by the release itself (the
//! longest-waiting one, or handed the lock when it is starving), a lost
//! wake-up or a crashed holder costs a bounded fallback, deadlines are
//! honoured, and waiting costs only a few commands per second.
//!
//! The "other process" in these tests is a raw connection running the same
//! commands, so the process-wide reentrancy of holds does not interfere.

mod common;

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use common::{RedisServer, lock, queue_len, release_as, unique_key, wait_until};
use redislock_core::testing::protocol::call::{Attempt, Call};
use redislock_core::testing::protocol::step::Step;
use redislock_core::testing::protocol::{keys, lock_calls};
use redislock_core::{Lock, LockOptions, OptionValue};

/// Takes `key` for `token` as another process would.
fn hold(server: &RedisServer, key: &[u8], token: &str, ttl_ms: u64) {
    let _: () = redis::cmd("SET")
        .arg(key)
        .arg(token)
        .arg("PX")
        .arg(ttl_ms)
        .query(&mut server.client())
        .unwrap();
}

/// Releases `key` held by `token` with the real release script.
fn release(server: &RedisServer, key: &[u8], token: &str) -> bool {
    release_as(
        server,
        key,
        token.as_bytes(),
        lock_calls::Successor::HandOver,
    )
}

/// A thread that waits up to 5 s for `key` (another process, as far as the
/// hold table can tell) and returns whether it got it, when, and the lock.
fn spawn_waiter(
    url: String,
    key: Vec<u8>,
    options: LockOptions,
) -> std::thread::JoinHandle<(bool, Instant, Lock)> {
    std::thread::spawn(move || {
        let mut l = Lock::new(key, 5.0, &[url], options).unwrap();
        let got = l.acquire(Duration::from_secs(5)).unwrap();
        (got, Instant::now(), l)
    })
}

/// Options with `retry_delay` set to `seconds`.
fn with_retry_delay(seconds: f64) -> LockOptions {
    let mut options = LockOptions::default();
    options
        .set("retry_delay", OptionValue::Number(seconds))
        .unwrap();
    options
}

/// [`spawn_waiter`] with a lease of `ttl` seconds, returning instead of
/// the time the lease this process believed at once when it got the lock.
fn spawn_ttl_waiter(
    url: String,
    key: Vec<u8>,
    ttl: f64,
    options: LockOptions,
) -> std::thread::JoinHandle<(bool, Option<f64>, Lock)> {
    std::thread::spawn(move || {
        let mut l = Lock::new(key, ttl, &[url], options).unwrap();
        let got = l.acquire(Duration::from_secs(5)).unwrap();
        (got, l.remaining_ttl().unwrap(), l)
    })
}

#[test]
fn a_release_wakes_the_waiter_at_once() {
    let server = RedisServer::start();
    let key = unique_key("wake");
    hold(&server, &key, "holder", 10_000);
    let url = server.url();
    let k = key.clone();
    let waiter = spawn_waiter(url, k, LockOptions::default());
    wait_until("the waiter is queued", Duration::from_secs(5), || {
        queue_len(&server, &key) == 1
    });
    std::thread::sleep(Duration::from_millis(50));
    let released_at = Instant::now();
    assert!(release(&server, &key, "holder"));
    let (got, acquired_at, mut l) = waiter.join().unwrap();
    assert!(got);
    let handoff = acquired_at - released_at;
    // Far below the 500 ms fallback: woken by the release, not by polling.
    assert!(
        handoff < Duration::from_millis(100),
        "handoff took {handoff:?}"
    );
    let owner: String = server.cmd(&["GET", std::str::from_utf8(&key).unwrap()]);
    assert_eq!(owner.as_bytes(), &l.token().unwrap()[..]);
    assert_eq!(queue_len(&server, &key), 0);
    assert!(l.release().unwrap());
}

#[test]
fn a_lost_wake_up_costs_at_most_the_fallback() {
    let server = RedisServer::start();
    let key = unique_key("lostwake");
    hold(&server, &key, "holder", 10_000);
    let waiter = spawn_waiter(server.url(), key.clone(), with_retry_delay(0.2));
    wait_until("the waiter is queued", Duration::from_secs(5), || {
        queue_len(&server, &key) == 1
    });
    // Hand the lock over as the release script would, but drop the wake-up.
    let members: Vec<String> = redis::cmd("ZRANGE")
        .arg(keys::queue_key(&key))
        .arg(0)
        .arg(-1)
        .query(&mut server.client())
        .unwrap();
    let token = members[0].clone();
    hold(&server, &key, &token, 5_000);
    let mark = [&key[..], b"~~a~", token.as_bytes()].concat();
    let _: () = redis::cmd("SET")
        .arg(mark)
        .arg("h")
        .arg("PX")
        .arg(5_000)
        .query(&mut server.client())
        .unwrap();
    let _: i64 = redis::cmd("ZREM")
        .arg(keys::queue_key(&key))
        .arg(&token)
        .query(&mut server.client())
        .unwrap();
    let handed_at = Instant::now();
    let (got, acquired_at, mut l) = waiter.join().unwrap();
    assert!(got);
    let took = acquired_at - handed_at;
    // The fallback check runs every retry_delay (0.2 s); generous for a
    // busy machine (1.04 s seen at load 15), far below the 5 s wait.
    assert!(
        took < Duration::from_millis(2500),
        "lost wake-up cost {took:?}"
    );
    assert_eq!(l.token().unwrap(), token.as_bytes());
    assert!(l.release().unwrap());
}

#[test]
fn a_crashed_holder_is_replaced_when_its_lease_ends() {
    let server = RedisServer::start();
    let key = unique_key("expiry");
    hold(&server, &key, "crashed-holder", 300);
    // A retry_delay far above the lease: only the waiter's wake-up at the
    // end of the holder's lease explains an acquire well before it.
    let mut waiter = Lock::new(key.clone(), 5.0, &[server.url()], with_retry_delay(5.0)).unwrap();
    let start = Instant::now();
    assert!(waiter.acquire(Duration::from_secs(8)).unwrap());
    let took = start.elapsed();
    assert!(took >= Duration::from_millis(250), "{took:?}");
    // Generous for a busy machine (seen: 834 ms at load 12 on 2 cores).
    assert!(took < Duration::from_secs(2), "{took:?}");
    assert!(waiter.release().unwrap());
}

#[test]
fn a_crashed_waiter_is_skipped() {
    let server = RedisServer::start();
    let key = unique_key("deadwaiter");
    hold(&server, &key, "holder", 10_000);
    // A waiter that queued and died: it never renews its entry.
    let dead = lock_calls::Waiter {
        token: b"dead",
        nonce: None,
        ttl_ms: 5_000,
        alive_ms: 100,
        fencing: false,
        arrival: 1,
    };
    let lock_keys = keys::LockKeys::new(key.clone(), b"~~fence".to_vec());
    let queued = lock_calls::wait_step(&lock_keys, &dead, true, false, Attempt::First)
        .query(&mut server.client())
        .unwrap();
    assert!(matches!(queued, Step::Waiting { .. }), "{queued:?}");
    let url = server.url();
    let k = key.clone();
    let waiter = spawn_waiter(url, k, LockOptions::default());
    wait_until("both are queued", Duration::from_secs(5), || {
        queue_len(&server, &key) == 2
    });
    std::thread::sleep(Duration::from_millis(150));
    let released_at = Instant::now();
    assert!(release(&server, &key, "holder"));
    let (got, acquired_at, mut l) = waiter.join().unwrap();
    assert!(got);
    // Woken by the release, not by its 500 ms fallback (a generous bound:
    // a busy machine can take tens of ms to schedule the waiter).
    assert!(acquired_at - released_at < Duration::from_millis(400));
    assert_ne!(l.token().unwrap(), b"dead");
    assert!(l.release().unwrap());
    assert_eq!(queue_len(&server, &key), 0);
}

#[test]
fn the_wait_deadline_is_honoured() {
    let server = RedisServer::start();
    let key = unique_key("deadline");
    hold(&server, &key, "holder", 30_000);
    // A 5 s fallback: a wait that overran its deadline would last that long.
    let mut waiter = Lock::new(key.clone(), 5.0, &[server.url()], with_retry_delay(5.0)).unwrap();
    for wait in [
        Duration::ZERO,
        Duration::from_millis(100),
        Duration::from_millis(350),
        Duration::from_millis(700),
    ] {
        let start = Instant::now();
        assert!(!waiter.acquire(wait).unwrap());
        let took = start.elapsed();
        assert!(took >= wait, "returned early: {took:?} < {wait:?}");
        // Generous for a busy machine, well below the 5 s fallback a wait
        // that ignored its deadline would add.
        assert!(
            took < wait + Duration::from_secs(2),
            "returned late: {took:?} for {wait:?}"
        );
        assert_eq!(
            queue_len(&server, &key),
            0,
            "a waiter that gave up left the queue"
        );
    }
}

/// PHP's time limit, asked of the host between the requests of a wait,
/// ends it early with `false`, leaving the queue.
#[test]
fn php_s_time_limit_ends_the_wait_early() {
    common::php_host::install();
    let server = RedisServer::start();
    let key = unique_key("stop");
    hold(&server, &key, "holder", 10_000);
    let mut waiter = lock(&server, &key, 5.0);
    common::php_host::time_limit_hit(true);
    let start = Instant::now();
    let got = waiter.acquire(Duration::from_secs(10)).unwrap();
    common::php_host::time_limit_hit(false);
    assert!(!got);
    // The limit is asked at least every 100 ms; a wait that ignored it would
    // take the whole 10 s. 3 s leaves room for a loaded machine (over 1 s
    // was seen beside a second copy of the suite and two other builds).
    let took = start.elapsed();
    assert!(took < Duration::from_secs(3), "stopped after {took:?}");
    assert_eq!(queue_len(&server, &key), 0);
}

#[test]
fn waiters_are_served_first_come_first_served() {
    let server = RedisServer::start();
    let key = unique_key("fifo");
    hold(&server, &key, "holder", 10_000);
    let order = Arc::new(Mutex::new(Vec::new()));
    let mut threads = Vec::new();
    for id in 0..4 {
        let (url, k, order) = (server.url(), key.clone(), order.clone());
        threads.push(std::thread::spawn(move || {
            let mut l = Lock::new(k, 5.0, &[url], LockOptions::default()).unwrap();
            assert!(l.acquire(Duration::from_secs(10)).unwrap());
            order.lock().unwrap().push(id);
            std::thread::sleep(Duration::from_millis(20));
            assert!(l.release().unwrap());
        }));
        wait_until("the waiter is queued", Duration::from_secs(5), || {
            queue_len(&server, &key) == id + 1
        });
    }
    assert!(release(&server, &key, "holder"));
    for t in threads {
        t.join().unwrap();
    }
    assert_eq!(*order.lock().unwrap(), vec![0, 1, 2, 3]);
}

/// No barging past a waiter: a release hands the lock to the queued
/// waiter (its plain try lost the race already), so the releaser that
/// takes it straight back finds it held.
#[test]
fn a_queued_waiter_is_handed_the_lock_at_the_next_release() {
    let server = RedisServer::start();
    let key = unique_key("starving");
    let mut a = lock(&server, &key, 5.0);
    assert!(a.acquire(Duration::ZERO).unwrap());
    // Another process queues up.
    let url = server.url().replace("127.0.0.1", "localhost");
    let k = key.clone();
    let waiter = std::thread::spawn(move || {
        let mut l = Lock::new(k, 5.0, &[url], LockOptions::default()).unwrap();
        let got = l.acquire(Duration::from_secs(5)).unwrap();
        let token = l.token();
        std::thread::sleep(Duration::from_millis(300));
        assert!(l.release().unwrap());
        (got, token)
    });
    wait_until("the waiter is queued", Duration::from_secs(5), || {
        queue_len(&server, &key) == 1
    });
    assert!(a.release().unwrap());
    assert!(
        !a.acquire(Duration::ZERO).unwrap(),
        "the releaser took the lock back past a waiter"
    );
    let owner: Option<Vec<u8>> = redis::cmd("GET")
        .arg(&key)
        .query(&mut server.client())
        .unwrap();
    let (got, token) = waiter.join().unwrap();
    assert!(got);
    assert_eq!(owner, token, "handed to the waiter by the release");
}

/// The waiter woken with a hand-over enters in the same round trip as the
/// wake-up, with its whole ttl claimed in Redis by the step sent behind
/// its wait: a handed lock is no cheaper to lose than one taken free. Its
/// release leaves no key.
#[test]
fn a_hand_over_claims_the_whole_ttl_as_it_enters() {
    let server = RedisServer::start();
    let key = unique_key("direct");
    hold(&server, &key, "holder", 10_000);
    let waiter = spawn_ttl_waiter(server.url(), key.clone(), 10.0, with_retry_delay(0.1));
    wait_until("the waiter is queued", Duration::from_secs(5), || {
        queue_len(&server, &key) == 1
    });
    assert!(release(&server, &key, "holder"));
    let (got, ttl_at_entry, mut l) = waiter.join().unwrap();
    assert!(got);
    let name = std::str::from_utf8(&key).unwrap();
    let pttl: i64 = server.cmd(&["PTTL", name]);
    // The whole 10 s ttl, not the hand-over's 2 x 0.1 s + 0.5 s.
    assert!(pttl > 9_000, "handed for {pttl} ms");
    let ttl_at_entry = ttl_at_entry.expect("held");
    assert!(ttl_at_entry > 9.0, "believed {ttl_at_entry} s at entry");
    assert!(l.release().unwrap());
    let left: Vec<String> = server.cmd(&["KEYS", &format!("{name}*")]);
    assert!(left.is_empty(), "left behind: {left:?}");
}

#[test]
fn waiting_costs_a_few_commands_per_second() {
    let server = RedisServer::start();
    let key = unique_key("load");
    hold(&server, &key, "holder", 10_000);
    let mut waiter = lock(&server, &key, 5.0);
    let _: () = server.cmd(&["CONFIG", "RESETSTAT"]);
    assert!(!waiter.acquire(Duration::from_secs(2)).unwrap());
    // What the waiter sent (the scripts' own SETs count as "set" calls).
    let sent = server.calls("evalsha") + server.calls("blpop");
    // The first step with its first block (100 ms at most) and the step
    // behind it, then per 500 ms fallback one BLPOP and one step, the last
    // of which gives up: 3 + 2 * 4 = 11 commands in 2 s, plus the first
    // use's NOSCRIPT (both steps of the first request sent again).
    assert!(sent <= 14, "{sent} commands in 2 s of waiting");
    assert!(sent >= 4, "{sent}");
}

/// A hand-over whose lease ran out before the waiter ran (paused, or its
/// wake-up read late) leaves an "h" on its wake-up list; the waiter's next
/// step finds the lock someone else's and must drop it, or its next
/// `BLPOP` would enter on a lock it does not hold.
#[test]
fn a_stale_hand_over_never_lets_a_waiter_enter() {
    let server = RedisServer::start();
    let key = unique_key("staleh");
    hold(&server, &key, "holder", 10_000);
    let lock_keys = keys::LockKeys::new(key.clone(), b"~~fence".to_vec());
    let w = lock_calls::Waiter {
        token: b"w1",
        nonce: None,
        ttl_ms: 5_000,
        alive_ms: 200,
        fencing: false,
        arrival: 1,
    };
    let mut con = server.client();
    let step = |con: &mut redis::Connection| {
        lock_calls::wait_step(&lock_keys, &w, true, false, Attempt::First)
            .query(con)
            .unwrap()
    };
    assert!(matches!(step(&mut con), Step::Waiting { .. }));
    // Handed over for what the mark had left (200 ms at most)...
    assert!(release(&server, &key, "holder"));
    let owner: String = server.cmd(&["GET", std::str::from_utf8(&key).unwrap()]);
    assert_eq!(owner, "w1");
    // ... which runs out before the waiter runs; someone else takes it.
    std::thread::sleep(Duration::from_millis(300));
    hold(&server, &key, "other", 10_000);
    // The step behind the next wake-up wait pops the stale "h" and must
    // not claim a lock that holds another token.
    let block = Duration::from_millis(50);
    let woken = Call::after_wake(
        lock_calls::blpop(&lock_keys.wake(b"w1"), block),
        block,
        lock_calls::wait_step(&lock_keys, &w, true, false, Attempt::First),
    )
    .query(&mut con)
    .unwrap();
    assert!(
        matches!(woken, Step::Waiting { .. }),
        "entered on a stale hand-over: {woken:?}"
    );
    let owner: String = server.cmd(&["GET", std::str::from_utf8(&key).unwrap()]);
    assert_eq!(owner, "other");
}

/// A lock handed over after a long block is claimed by the step sent
/// behind the block (its lease counts from that request's send, long
/// ago), then extended once more: the waiter starts with about its whole
/// lease, and never believes more than Redis gives it.
#[test]
fn a_hand_over_after_a_long_block_starts_with_its_whole_lease() {
    let server = RedisServer::start();
    let key = unique_key("handedfrom");
    hold(&server, &key, "holder", 10_000);
    // A long block: the waiter steps once, then sleeps until woken.
    let waiter = spawn_ttl_waiter(server.url(), key.clone(), 0.5, with_retry_delay(5.0));
    wait_until("the waiter is queued", Duration::from_secs(5), || {
        queue_len(&server, &key) == 1
    });
    std::thread::sleep(Duration::from_millis(300));
    assert!(release(&server, &key, "holder"));
    let (got, believed, mut l) = waiter.join().unwrap();
    assert!(got);
    // Counted from the send of the request behind which the step ran, 300
    // ms or more before the hand-over, it would be 0.2 s at most.
    let believed = believed.expect("held");
    assert!(believed > 0.3, "believed {believed} s");
    let pttl: i64 = server.cmd(&["PTTL", std::str::from_utf8(&key).unwrap()]);
    assert!(pttl > 200, "Redis gives it {pttl} ms");
    let _ = l.release();
}

/// Redis's timers at 1 Hz: a `BLPOP` timeout is answered up to a second
/// late, so every block of a wait overruns and is ended with `CLIENT
/// UNBLOCK`, however late a busy machine runs the waiter (at the default
/// 10 Hz a waiter woken late often finds the reply there already).
const SLOW_TIMERS: [&str; 2] = ["--hz", "1"];

/// A wait whose blocks end at their time asks the server to end them
/// (`CLIENT UNBLOCK`). One such request that gets no answer (the server
/// paused longer than `read_timeout` with `CLIENT PAUSE ALL`) must not
/// switch that off for the rest of the process: only a refusal does (an
/// ACL, a proxy that knows no such command). At da6b638 the timeout
/// marked the server as refusing, and every later wait there fell back to
/// Redis's timers (up to 100 ms late per block at `hz 10`).
#[test]
fn an_unanswered_unblock_does_not_switch_it_off() {
    let server = RedisServer::start_with(&SLOW_TIMERS);
    let key = unique_key("unblock-unanswered");
    hold(&server, &key, "other", 30_000);
    let mut options = with_retry_delay(0.2);
    options
        .set("read_timeout", OptionValue::Number(0.5))
        .unwrap();
    options.set("reentrant", OptionValue::Bool(false)).unwrap();
    let url = server.url();
    let (u, k, o) = (url.clone(), key.clone(), options.clone());
    let paused = std::thread::spawn(move || {
        let mut l = Lock::new(k, 5.0, &[u], o).unwrap();
        l.acquire(Duration::from_secs(2))
    });
    wait_until("the waiter queues", Duration::from_secs(5), || {
        queue_len(&server, &key) == 1
    });
    let before = common::command_stats(&server, "client|unblock").0;
    // Longer than the waiter's read timeout: its next unblock goes
    // unanswered (the server runs no client's command meanwhile).
    let _: () = server.cmd(&["CLIENT", "PAUSE", "1500", "ALL"]);
    let during = paused.join().unwrap();
    std::thread::sleep(Duration::from_millis(1_600));
    let after_pause = common::command_stats(&server, "client|unblock").0;
    // Another wait on the same server, in the same process: its blocks
    // end at their time again.
    let mut l = Lock::new(key.clone(), 5.0, &[url], options).unwrap();
    assert!(!l.acquire(Duration::from_millis(700)).unwrap());
    let after = common::command_stats(&server, "client|unblock").0;
    println!(
        "the wait during the pause: {during:?}; CLIENT UNBLOCK calls {before} before, \
         {after_pause} after the pause, {after} after the next wait"
    );
    assert!(
        after > after_pause,
        "no CLIENT UNBLOCK in a wait after one went unanswered ({after_pause} then {after} \
         calls): the server was taken for one that refuses it"
    );
}

/// The other side of [`an_unanswered_unblock_does_not_switch_it_off`]: a
/// server that refuses `CLIENT UNBLOCK` (an ACL without it) is asked once
/// per process, and its waits fall back to its timers.
#[test]
fn a_refused_unblock_is_asked_once() {
    let server = RedisServer::start_with(&SLOW_TIMERS);
    let key = unique_key("unblock-refused");
    hold(&server, &key, "other", 30_000);
    let _: () = server.cmd(&[
        "ACL",
        "SETUSER",
        "no-unblock",
        "reset",
        "on",
        ">pw",
        "~*",
        "&*",
        "+@all",
        "-client|unblock",
    ]);
    let url = server
        .url()
        .replacen("redis://", "redis://no-unblock:pw@", 1);
    let mut options = with_retry_delay(0.2);
    options.set("reentrant", OptionValue::Bool(false)).unwrap();
    for _ in 0..2 {
        let mut l = Lock::new(
            key.clone(),
            5.0,
            std::slice::from_ref(&url),
            options.clone(),
        )
        .unwrap();
        assert!(!l.acquire(Duration::from_millis(700)).unwrap());
    }
    let info: String = server.cmd(&["INFO", "commandstats"]);
    let line = info
        .lines()
        .find(|l| l.starts_with("cmdstat_client|unblock:"))
        .unwrap_or("");
    println!("{line}");
    assert!(
        line.contains("rejected_calls=1,"),
        "CLIENT UNBLOCK refused by the ACL must be asked once in the process: {line:?}"
    );
}

/// A signal whose handler ends the wait ends it while the server is away
/// too: every request is dropped (a proxy closes each connection a request
/// comes on), so the wait's first try and its steps fail and it pauses
/// between them; the handler asks at 0.3 s, and the 10 s wait ends at once
/// (with `Interrupted`, or with the connection's failure when the give-back
/// got no answer either). (It paused unasked: the wait went on to its end.)
#[test]
fn a_signal_ends_a_wait_while_the_server_is_away() {
    common::php_host::install();
    let server = RedisServer::start();
    let proxy = common::proxy::Proxy::start(&server);
    let key = unique_key("away");
    hold(&server, &key, "holder", 30_000);
    let mut waiter = Lock::new(key.clone(), 5.0, &[proxy.url()], LockOptions::default()).unwrap();
    // The server's checks made before every request is dropped.
    assert!(!waiter.acquire(Duration::ZERO).unwrap());
    proxy.refuse_requests_with(&[b"*"], Duration::from_secs(20));
    let began = Instant::now();
    common::php_host::end_wait_after(Some(Duration::from_millis(300)));
    let got = waiter.acquire(Duration::from_secs(10));
    let took = began.elapsed();
    common::php_host::end_wait_after(None);
    assert!(
        matches!(&got, Err(e) if matches!(e, redislock_core::LockError::Interrupted) || e.is_connection_error()),
        "{got:?} after {took:?}"
    );
    assert!(took < Duration::from_secs(3), "ended after {took:?}");
    assert!(proxy.refused() >= 2, "the wait's requests were dropped");
}

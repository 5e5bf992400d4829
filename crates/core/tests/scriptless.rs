//! The lock without scripts, on a server that refuses them but has
//! `DELIFEQ` and `SET ... IFEQ` (Valkey 9): scripts renamed away, and an
//! ACL user without `@scripting`. Needs a Valkey 9 server program named by
//! `REDISLOCK_TEST_SERVER` (e.g. `chroot /var/tmp/valkey-sid
//! valkey-server`); without one these tests say why and pass without
//! running. On the machine's Redis 7.0 (no `DELIFEQ`) the same servers
//! still get the clear refusal, always tested.

mod common;

use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use common::{NO_SCRIPTS, RedisServer, unique_key};
use redislock_core::{Lock, LockError, LockOptions, OptionValue};
use redislock_fixture::{TEST_SERVER_ENV, skipped, test_server_program};

/// A server of [`TEST_SERVER_ENV`]'s program with `extra` arguments, if
/// one is named and has `DELIFEQ`; otherwise prints why the test is
/// skipped and returns `None`.
fn valkey(test: &str, extra: &[&str]) -> Option<RedisServer> {
    let Some(program) = test_server_program() else {
        skipped(
            test,
            &format!(
                "no Valkey 9 to test on; set {TEST_SERVER_ENV} to its program, e.g. \
                 {TEST_SERVER_ENV}=\"chroot /var/tmp/valkey-sid valkey-server\""
            ),
        );
        return None;
    };
    let server = RedisServer::start_program(&program, extra);
    let info: Vec<redis::Value> = server.cmd(&["COMMAND", "INFO", "DELIFEQ"]);
    if !matches!(info.first(), Some(redis::Value::Array(_))) {
        skipped(
            test,
            &format!("{program:?} has no DELIFEQ (Valkey 9.0+ needed)"),
        );
        return None;
    }
    Some(server)
}

/// The two script-less set-ups: scripts renamed away, and an ACL user
/// without `@scripting`. Each gives the server and the URL to lock with.
fn setups(test: &str) -> Vec<(&'static str, RedisServer, String)> {
    let mut out = Vec::new();
    if let Some(server) = valkey(test, &NO_SCRIPTS) {
        let url = server.url();
        out.push(("renamed", server, url));
    }
    if let Some(server) = valkey(test, &[]) {
        let url = no_scripting_user(&server);
        out.push(("acl", server, url));
    }
    out
}

/// Adds a user who may run everything but scripts; its URL.
fn no_scripting_user(server: &RedisServer) -> String {
    let _: () = server.cmd(&[
        "ACL",
        "SETUSER",
        "noscript",
        "on",
        ">pw",
        "~*",
        "&*",
        "+@all",
        "-@scripting",
    ]);
    format!("redis://noscript:pw@127.0.0.1:{}", server.port)
}

fn options(pairs: &[(&str, OptionValue)]) -> LockOptions {
    let mut options = LockOptions::default();
    for (name, value) in pairs {
        options.set(name, value.clone()).unwrap();
    }
    options
}

fn lock_at(url: &str, key: &[u8], ttl: f64, options: LockOptions) -> Lock {
    Lock::new(key.to_vec(), ttl, &[url.to_owned()], options).unwrap()
}

/// Another scope on the same server (`localhost` for `127.0.0.1`): no
/// reentrancy with the locks of `url`.
fn elsewhere(url: &str) -> String {
    url.replace("127.0.0.1", "localhost")
}

fn get(server: &RedisServer, key: &[u8]) -> Option<Vec<u8>> {
    server.cmd(&["GET", &String::from_utf8_lossy(key)])
}

#[test]
fn acquire_release_refresh_and_ttl_work_without_scripts() {
    for (setup, server, url) in setups("acquire_release_refresh_and_ttl_work_without_scripts") {
        let key = unique_key("scriptless");
        let mut l = lock_at(&url, &key, 5.0, LockOptions::default());
        assert!(l.acquire(Duration::ZERO).unwrap(), "{setup}");
        let token = l.token().unwrap();
        assert_eq!(get(&server, &key), Some(token.clone()), "{setup}");
        // Another owner is kept out, waiting or not.
        let mut other = lock_at(&elsewhere(&url), &key, 5.0, LockOptions::default());
        assert!(!other.acquire(Duration::ZERO).unwrap(), "{setup}");
        assert!(
            !other.acquire(Duration::from_millis(200)).unwrap(),
            "{setup}"
        );
        assert!(!other.release().unwrap(), "{setup}");
        assert!(other.is_locked().unwrap(), "{setup}");
        // isAcquired and remainingTtl.
        assert!(l.is_acquired().unwrap(), "{setup}");
        let left = l.remaining_ttl().unwrap().unwrap();
        assert!(left > 4.0 && left <= 5.0, "{setup}: {left}");
        // refresh sets the lease (SET IFEQ), and only while it is ours.
        assert!(l.refresh(Some(20.0)).unwrap(), "{setup}");
        let pttl: i64 = server.cmd(&["PTTL", &String::from_utf8_lossy(&key)]);
        assert!(pttl > 19_000, "{setup}: {pttl}");
        assert_eq!(get(&server, &key), Some(token.clone()), "{setup}");
        // Reentrant: a second object of this process joins the hold.
        let mut again = lock_at(&url, &key, 30.0, LockOptions::default());
        assert!(again.acquire(Duration::ZERO).unwrap(), "{setup}");
        let pttl: i64 = server.cmd(&["PTTL", &String::from_utf8_lossy(&key)]);
        assert!(pttl > 29_000, "{setup}: {pttl}");
        assert!(again.release().unwrap(), "{setup}");
        assert_eq!(get(&server, &key), Some(token.clone()), "{setup}");
        // release deletes only our token.
        assert!(l.release().unwrap(), "{setup}");
        assert_eq!(get(&server, &key), None, "{setup}");
        assert!(!l.is_acquired().unwrap(), "{setup}");
        assert_eq!(l.remaining_ttl().unwrap(), None, "{setup}");
        assert!(!l.refresh(None).unwrap(), "{setup}");
        // A lease that someone else's key replaced is not released.
        assert!(l.acquire(Duration::ZERO).unwrap(), "{setup}");
        let _: () = server.cmd(&["SET", &String::from_utf8_lossy(&key), "theirs"]);
        assert!(!l.refresh(None).unwrap(), "{setup}");
        assert!(!l.release().unwrap(), "{setup}");
        assert_eq!(get(&server, &key), Some(b"theirs".to_vec()), "{setup}");
        // No script ran (the one EVALSHA tried, per server and process,
        // was refused).
        let info: String = server.cmd(&["INFO", "commandstats"]);
        assert!(!info.contains("cmdstat_eval:"), "{setup}: {info}");
        assert!(
            !info.contains("cmdstat_evalsha:") || info.contains("cmdstat_evalsha:calls=0,"),
            "{setup}: {info}"
        );
        assert!(info.contains("cmdstat_delifeq"), "{setup}: {info}");
    }
}

#[test]
fn a_blocked_acquire_is_woken_by_the_release() {
    for (setup, server, url) in setups("a_blocked_acquire_is_woken_by_the_release") {
        let key = unique_key("scriptless-wake");
        let mut holder = lock_at(&url, &key, 10.0, LockOptions::default());
        assert!(holder.acquire(Duration::ZERO).unwrap());
        let waiter_url = elsewhere(&url);
        let k = key.clone();
        let waiter = std::thread::spawn(move || {
            // A long retry_delay: only the release's wake-up explains a
            // quick acquire.
            let options = options(&[("retry_delay", OptionValue::Number(3.0))]);
            let mut l = lock_at(&waiter_url, &k, 5.0, options);
            let started = Instant::now();
            let got = l.acquire(Duration::from_secs(8)).unwrap();
            let waited = started.elapsed();
            assert!(l.release().unwrap());
            (got, waited)
        });
        std::thread::sleep(Duration::from_millis(400));
        let released = Instant::now();
        assert!(holder.release().unwrap(), "{setup}");
        let (got, waited) = waiter.join().unwrap();
        assert!(got, "{setup}: the waiter got the lock");
        assert!(waited >= Duration::from_millis(350), "{setup}: {waited:?}");
        assert!(
            released.elapsed() < Duration::from_millis(1500),
            "{setup}: woken {:?} after the release",
            released.elapsed()
        );
        assert_eq!(get(&server, &key), None, "{setup}");
        // A wait that runs out returns false after about its length.
        assert!(holder.acquire(Duration::ZERO).unwrap());
        let mut late = lock_at(&elsewhere(&url), &key, 5.0, LockOptions::default());
        let started = Instant::now();
        assert!(!late.acquire(Duration::from_millis(300)).unwrap());
        let took = started.elapsed();
        assert!(
            took >= Duration::from_millis(290) && took < Duration::from_secs(2),
            "{took:?}"
        );
        assert!(holder.release().unwrap());
    }
}

/// A woken waiter's try rides behind its `BLPOP`: Redis runs it the moment
/// the release wakes the waiter, and the waiter sends nothing more to win.
/// Counted from the moment the waiter blocks: the server reads the
/// holder's two requests (its release, then the wake-up it pushes) and
/// none of the waiter's (a try sent after the wake-up would be a third).
#[test]
fn a_woken_waiter_tries_in_the_request_of_its_wake_up() {
    for (setup, server, url) in setups("a_woken_waiter_tries_in_the_request_of_its_wake_up") {
        let key = unique_key("scriptless-behind");
        let mut holder = lock_at(&url, &key, 10.0, LockOptions::default());
        assert!(holder.acquire(Duration::ZERO).unwrap());
        let (waiter_url, k) = (elsewhere(&url), key.clone());
        let waiter = std::thread::spawn(move || {
            let options = options(&[("retry_delay", OptionValue::Number(3.0))]);
            let mut l = lock_at(&waiter_url, &k, 5.0, options);
            let got = l.acquire(Duration::from_secs(8)).unwrap();
            (got, l)
        });
        // Its try, its first step, then its BLPOP with a step behind it
        // (blocked for its retry_delay, 3 s).
        std::thread::sleep(Duration::from_millis(400));
        let mut admin = server.client();
        let _: () = redis::cmd("CONFIG")
            .arg("RESETSTAT")
            .query(&mut admin)
            .unwrap();
        assert!(holder.release().unwrap(), "{setup}");
        let (got, mut l) = waiter.join().unwrap();
        assert!(got, "{setup}: the waiter got the lock");
        let stats: String = redis::cmd("INFO").arg("stats").query(&mut admin).unwrap();
        let reads: u64 = stats
            .lines()
            .find_map(|line| line.strip_prefix("total_reads_processed:"))
            .unwrap()
            .trim()
            .parse()
            .unwrap();
        // Less the INFO itself.
        assert_eq!(reads - 1, 2, "{setup}: the release and its wake-up only");
        assert!(l.release().unwrap());
    }
}

#[test]
fn fencing_is_refused_without_scripts() {
    for (setup, server, url) in setups("fencing_is_refused_without_scripts") {
        let key = unique_key("scriptless-fence");
        let fenced = options(&[("fencing", OptionValue::Bool(true))]);
        let mut l = lock_at(&url, &key, 5.0, fenced);
        for wait in [Duration::ZERO, Duration::from_millis(100)] {
            let err = l.acquire(wait).unwrap_err();
            assert!(matches!(err, LockError::Unsupported(_)), "{setup}: {err:?}");
            let message = err.to_string();
            assert!(message.contains("\"fencing\""), "{message}");
            assert!(message.contains("refuses Lua scripts"), "{message}");
            assert!(message.contains("no lock was taken"), "{message}");
            assert_eq!(get(&server, &key), None, "{setup}");
        }
    }
}

#[test]
fn a_user_who_may_not_release_gets_no_lock() {
    let test = "a_user_who_may_not_release_gets_no_lock";
    let Some(server) = valkey(test, &[]) else {
        return;
    };
    let _: () = server.cmd(&[
        "ACL",
        "SETUSER",
        "nodelete",
        "on",
        ">pw",
        "~*",
        "&*",
        "+@all",
        "-@scripting",
        "-delifeq",
    ]);
    let url = format!("redis://nodelete:pw@127.0.0.1:{}", server.port);
    let key = unique_key("scriptless-nodelete");
    let mut l = lock_at(&url, &key, 5.0, LockOptions::default());
    let err = l.acquire(Duration::ZERO).unwrap_err();
    let message = err.to_string();
    assert!(matches!(err, LockError::Server { .. }), "{err:?}");
    assert!(message.contains("lock without scripts needs"), "{message}");
    assert!(message.contains("'delifeq'"), "{message}");
    assert_eq!(get(&server, &key), None);
}

#[test]
fn auto_renew_keeps_a_lease_without_scripts() {
    for (setup, server, url) in setups("auto_renew_keeps_a_lease_without_scripts") {
        let key = unique_key("scriptless-renew");
        let renewed = options(&[("auto_renew", OptionValue::Bool(true))]);
        let mut l = lock_at(&url, &key, 0.3, renewed);
        assert!(l.acquire(Duration::ZERO).unwrap(), "{setup}");
        std::thread::sleep(Duration::from_millis(1000));
        assert!(l.is_acquired().unwrap(), "{setup}");
        assert_eq!(get(&server, &key), l.token(), "{setup}");
        assert!(l.release().unwrap(), "{setup}");
    }
}

/// The child of [`two_processes_exclude_each_other`]: takes the lock
/// named by the environment several times, holding it 50 ms each time,
/// and prints each hold as `HOLD <from µs> <to µs>`.
#[test]
#[ignore = "run by two_processes_exclude_each_other"]
fn scriptless_child() {
    let (Ok(url), Ok(key)) = (
        std::env::var("SCRIPTLESS_CHILD_URL"),
        std::env::var("SCRIPTLESS_CHILD_KEY"),
    ) else {
        return;
    };
    let now = || {
        SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .unwrap()
            .as_micros()
    };
    let options = options(&[("retry_delay", OptionValue::Number(0.05))]);
    let mut l = lock_at(&url, key.as_bytes(), 5.0, options);
    for _ in 0..5 {
        assert!(l.acquire(Duration::from_secs(10)).unwrap());
        let from = now();
        std::thread::sleep(Duration::from_millis(50));
        let to = now();
        assert!(l.release().unwrap());
        println!("HOLD {from} {to}");
    }
}

#[test]
fn two_processes_exclude_each_other() {
    for (setup, _server, url) in setups("two_processes_exclude_each_other") {
        let key = String::from_utf8(unique_key("scriptless-procs")).unwrap();
        let children: Vec<_> = (0..2)
            .map(|_| {
                std::process::Command::new(std::env::current_exe().unwrap())
                    .args(["--ignored", "--exact", "scriptless_child", "--nocapture"])
                    .env("SCRIPTLESS_CHILD_URL", &url)
                    .env("SCRIPTLESS_CHILD_KEY", &key)
                    .stdout(std::process::Stdio::piped())
                    .spawn()
                    .unwrap()
            })
            .collect();
        let mut holds: Vec<(u128, u128)> = Vec::new();
        for child in children {
            let out = child.wait_with_output().unwrap();
            assert!(out.status.success(), "{setup}: {out:?}");
            for line in String::from_utf8_lossy(&out.stdout).lines() {
                if let Some(rest) = line.strip_prefix("HOLD ") {
                    let (from, to) = rest.split_once(' ').unwrap();
                    holds.push((from.parse().unwrap(), to.parse().unwrap()));
                }
            }
        }
        assert_eq!(holds.len(), 10, "{setup}");
        holds.sort_unstable();
        for pair in holds.windows(2) {
            assert!(
                pair[0].1 <= pair[1].0,
                "{setup}: overlapping holds {pair:?}"
            );
        }
    }
}

#[test]
fn redis_7_without_scripts_still_refuses() {
    let renamed = RedisServer::start_with(&NO_SCRIPTS);
    let acl = RedisServer::start();
    let acl_url = no_scripting_user(&acl);
    for (setup, server, url) in [("renamed", &renamed, renamed.url()), ("acl", &acl, acl_url)] {
        let key = unique_key("redis7-no-scripts");
        for wait in [Duration::ZERO, Duration::from_millis(200)] {
            let mut l = lock_at(&url, &key, 5.0, LockOptions::default());
            let err = l.acquire(wait).unwrap_err();
            let message = err.to_string();
            assert!(matches!(err, LockError::Server { .. }), "{setup}: {err:?}");
            assert!(message.contains("refuses EVALSHA"), "{setup}: {message}");
            assert!(message.contains("needs EVAL/EVALSHA"), "{setup}: {message}");
            assert_eq!(get(server, &key), None, "{setup}: no lock was taken");
        }
    }
}

/// A try that won too late (its reply held up past its lease) is undone;
/// when that undo gets no answer it stays pending and is sent again, and
/// it would delete what the wait that follows takes with the same token
/// while the holder believes it holds. The acquire now ends with the
/// undo's failure instead of waiting on with that token.
#[test]
fn a_late_tries_unanswered_undo_never_deletes_the_waits_win() {
    let Some(server) = valkey(
        "a_late_tries_unanswered_undo_never_deletes_the_waits_win",
        &NO_SCRIPTS,
    ) else {
        return;
    };
    let proxy = common::proxy::Proxy::start(&server);
    let key = unique_key("scriptless-late");
    let options = options(&[
        ("retry_delay", OptionValue::Number(0.05)),
        ("read_timeout", OptionValue::Number(2.0)),
        ("auto_renew", OptionValue::Bool(true)),
    ]);
    let mut l = lock_at(&proxy.url(), &key, 0.4, options);
    // Found script-less before the faults.
    assert!(l.acquire(Duration::ZERO).unwrap());
    assert!(l.release().unwrap());
    proxy.hold_reply_to(b"NX", Duration::from_millis(500));
    proxy.refuse_requests_with(&[b"DELIFEQ"], Duration::from_millis(600));
    let got = l.acquire(Duration::from_secs(3));
    assert_eq!(proxy.replies_held(), 1, "the try's reply was held up");
    match got {
        Err(error) => {
            assert!(error.is_connection_error(), "{error:?}");
            assert!(!l.is_acquired().unwrap());
        }
        Ok(held) => {
            assert!(held, "a 3 s wait either wins or fails");
            // Watched past the undo's resends.
            let token = l.token().unwrap();
            let until = Instant::now() + Duration::from_millis(1_200);
            while Instant::now() < until {
                let believed = l.is_acquired().unwrap();
                let owner = get(&server, &key);
                assert!(
                    !believed || owner.as_deref() == Some(&token[..]),
                    "believed held while Redis had {:?}",
                    owner.as_deref().map(String::from_utf8_lossy)
                );
                std::thread::sleep(Duration::from_millis(10));
            }
        }
    }
}

/// A script-less waiter W (ttl `ttl`, behind a proxy) waiting for a holder
/// elsewhere whose lease ends 0.8 s after W starts; its wait of up to
/// `wait` runs in a thread (its result, when it returned, and W). The
/// reply to its first wait (a `BLPOP` that lasts until that lease ends,
/// and the step behind it, which wins) is held back `held`. `None`
/// without a Valkey 9.
type WaitingWaiter = (
    RedisServer,
    common::proxy::Proxy,
    Vec<u8>,
    std::thread::JoinHandle<(Result<bool, LockError>, Instant, Lock)>,
);

fn waiting_waiter(test: &str, ttl: f64, wait: Duration, held: Duration) -> Option<WaitingWaiter> {
    let server = valkey(test, &NO_SCRIPTS)?;
    let proxy = common::proxy::Proxy::start(&server);
    let key = unique_key("scriptless-top-up");
    let opts = options(&[
        ("retry_delay", OptionValue::Number(5.0)),
        ("read_timeout", OptionValue::Number(3.0)),
    ]);
    // The server found script-less (its checks name the commands of a wait)
    // before the hold is armed.
    let mut first = lock_at(&proxy.url(), &unique_key("first"), 1.0, opts.clone());
    assert!(first.acquire(Duration::ZERO).unwrap());
    assert!(first.release().unwrap());
    proxy.hold_reply_to_all(&[b"BLPOP", b"$2\r\nNX\r\n", &key], held);
    let name = String::from_utf8(key.clone()).unwrap();
    let set: Option<String> = server.cmd(&["SET", &name, "holder", "NX", "PX", "800"]);
    assert!(set.is_some());
    let (url, k) = (proxy.url(), key.clone());
    let waiter = std::thread::spawn(move || {
        let mut w = lock_at(&url, &k, ttl, opts);
        let got = w.acquire(wait);
        (got, Instant::now(), w)
    });
    // W's first step marked the waiters (`K~~nw`): its next goes out when
    // the holder's lease ends.
    let mark = format!("{name}~~nw");
    let deadline = Instant::now() + Duration::from_secs(3);
    while server.cmd::<i64>(&["EXISTS", &mark]) == 0 {
        assert!(Instant::now() < deadline, "the waiter never waited");
        std::thread::sleep(Duration::from_millis(2));
    }
    Some((server, proxy, key, waiter))
}

/// Waits until the proxy holds a reply back (its request ran).
fn until_holding(proxy: &common::proxy::Proxy) {
    let deadline = Instant::now() + Duration::from_secs(3);
    while !proxy.holding_reply() {
        assert!(Instant::now() < deadline, "no reply was held");
        std::thread::sleep(Duration::from_millis(1));
    }
}

/// A script-less win whose step's reply came after a quarter of the ttl
/// is topped up (`SET IFEQ PX`) before it is believed, and its lease
/// counts from the top-up: the reply to W's (ttl 2 s) wait and the step
/// behind it after the holder's lease ended (it wins) is held 0.8 s, and
/// when W's acquire
/// returns true its lease is close to 2 s again (the step's own would be
/// under 1.2 s).
#[test]
fn a_late_win_is_topped_up_without_scripts() {
    let test = "a_late_win_is_topped_up_without_scripts";
    let (wait, held) = (Duration::from_secs(4), Duration::from_millis(800));
    let Some((server, proxy, key, waiter)) = waiting_waiter(test, 2.0, wait, held) else {
        return;
    };
    let (got, _, mut w) = waiter.join().unwrap();
    assert!(matches!(got, Ok(true)), "{got:?}");
    let lease: i64 = server.cmd(&["PTTL", &String::from_utf8_lossy(&key)]);
    assert_eq!(proxy.holds().len(), 1, "the step's reply was held");
    assert!(lease > 1_500, "the lease after the top-up: {lease} ms");
    assert!(w.release().unwrap());
}

/// When the top-up's reply comes after the ttl too, the win is never
/// believed. W (ttl 2 s) wins in the step behind its first wait, read
/// about 0.85 s after that wait's send (the reply held 50 ms): over a
/// quarter of the ttl, so it tops the lease up, and that top-up's reply is
/// held 2.6 s, past the lease it set. A competitor C gets the lock once
/// W's lease ends, and W's acquire does not return true while C holds it
/// (it gives the late win back and waits on).
#[test]
fn a_win_whose_top_up_comes_late_never_counts_without_scripts() {
    let test = "a_win_whose_top_up_comes_late_never_counts_without_scripts";
    let began = Instant::now();
    let (wait, held) = (Duration::from_secs(5), Duration::from_millis(50));
    let Some((server, proxy, key, waiter)) = waiting_waiter(test, 2.0, wait, held) else {
        return;
    };
    // While the wait's reply is held (one hold at a time), the top-up's.
    until_holding(&proxy);
    proxy.hold_reply_to_all(&[b"$4\r\nIFEQ\r\n", &key], Duration::from_millis(2_600));
    let mut c = lock_at(&elsewhere(&server.url()), &key, 10.0, options(&[]));
    let (c_at, c_released) = common::competitor_turn(&mut c, began);
    let (w_got, w_when, mut w) = waiter.join().unwrap();
    let w_at = w_when.duration_since(began);
    assert!(
        proxy.holds().len() >= 2,
        "the step's reply and the top-up's were held: {:?}",
        proxy.holds()
    );
    common::never_believed_while_held(matches!(w_got, Ok(true)), w_at, (c_at, c_released));
    let _ = w.release();
}

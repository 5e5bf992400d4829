//! Redlock over five local masters: quorum, faults (stopped, frozen and
//! restarted servers, one that never accepts a connection), waiting,
//! renewal and refusals.

mod common;

use std::time::{Duration, Instant};

use common::{RedisServer, release_as, unique_key};
use redislock_core::testing::protocol::lock_calls;
use redislock_core::{Lock, LockError, LockOptions, OptionValue};

fn masters(n: usize) -> Vec<RedisServer> {
    (0..n).map(|_| RedisServer::start()).collect()
}

fn urls(servers: &[RedisServer]) -> Vec<String> {
    servers.iter().map(RedisServer::url).collect()
}

fn options(pairs: &[(&str, f64)]) -> LockOptions {
    let mut options = LockOptions::default();
    for (name, value) in pairs {
        options.set(name, OptionValue::Number(*value)).unwrap();
    }
    options
}

fn redlock(servers: &[RedisServer], key: &[u8], ttl: f64, options: LockOptions) -> Lock {
    Lock::new(key.to_vec(), ttl, &urls(servers), options).unwrap()
}

/// How many of the running servers hold `key`.
fn holders(servers: &[RedisServer], key: &[u8]) -> usize {
    let key = String::from_utf8_lossy(key).into_owned();
    servers
        .iter()
        .filter(|s| s.cmd::<i64>(&["EXISTS", &key]) == 1)
        .count()
}

#[test]
fn a_lock_is_taken_and_released_on_every_master() {
    let servers = masters(5);
    let key = unique_key("redlock");
    let mut a = redlock(&servers, &key, 10.0, LockOptions::default());
    let mut b = Lock::new(key.clone(), 10.0, &urls(&servers), LockOptions::default()).unwrap();
    assert!(a.acquire(Duration::ZERO).unwrap());
    assert_eq!(holders(&servers, &key), 5);
    let token = String::from_utf8(a.token().unwrap()).unwrap();
    let value: String = servers[3].cmd(&["GET", std::str::from_utf8(&key).unwrap()]);
    assert_eq!(value, token, "the value is the owner token on every master");
    assert!(a.is_acquired().unwrap());
    let left = a.remaining_ttl().unwrap().unwrap();
    assert!(left > 9.0 && left <= 10.0, "{left}");
    assert!(a.refresh(Some(20.0)).unwrap());
    assert!(a.remaining_ttl().unwrap().unwrap() > 19.0);
    // Another object of this process re-enters (reentrancy is per process).
    assert!(b.acquire(Duration::ZERO).unwrap());
    assert!(b.release().unwrap());
    assert_eq!(holders(&servers, &key), 5, "still held by a");
    assert!(a.release().unwrap());
    assert_eq!(holders(&servers, &key), 0);
}

#[test]
fn two_masters_stopped_still_acquire() {
    let mut servers = masters(5);
    let key = unique_key("redlock-2-down");
    servers[1].kill();
    servers[3].kill();
    let mut a = redlock(&servers, &key, 10.0, LockOptions::default());
    assert!(a.acquire(Duration::ZERO).unwrap());
    let running: Vec<RedisServer> = servers.into_iter().filter(|s| s.is_running()).collect();
    assert_eq!(holders(&running, &key), 3);
    assert!(a.is_acquired().unwrap());
    assert!(a.refresh(None).unwrap());
    assert!(a.release().unwrap());
    assert_eq!(holders(&running, &key), 0);
}

#[test]
fn three_masters_stopped_fail_with_the_quorum_named_within_the_connect_timeout() {
    let mut servers = masters(5);
    let key = unique_key("redlock-3-down");
    for i in [0, 2, 4] {
        servers[i].kill();
    }
    let mut a = redlock(&servers, &key, 10.0, options(&[("connect_timeout", 1.0)]));
    let started = Instant::now();
    let err = a.acquire(Duration::ZERO).unwrap_err();
    let took = started.elapsed();
    println!("quorum lost reported after {took:?}: {err}");
    assert!(took < Duration::from_secs(1), "{took:?}");
    let message = err.to_string();
    assert!(message.contains("quorum of 3 of 5"), "{message}");
    assert!(message.contains("3 of 5 failed"), "{message}");
    assert!(matches!(err, LockError::Connection { .. }), "{err:?}");
    let running: Vec<&RedisServer> = servers.iter().filter(|s| s.is_running()).collect();
    for s in running {
        let n: i64 = s.cmd(&["EXISTS", std::str::from_utf8(&key).unwrap()]);
        assert_eq!(n, 0, "the minority that accepted was undone");
    }
}

#[test]
fn a_frozen_master_costs_at_most_the_read_timeout() {
    let servers = masters(5);
    let key = unique_key("redlock-frozen");
    let mut a = redlock(&servers, &key, 10.0, options(&[("read_timeout", 0.3)]));
    // Warm the pool, then freeze one master.
    assert!(a.acquire(Duration::ZERO).unwrap());
    assert!(a.release().unwrap());
    servers[2].pause();
    let started = Instant::now();
    assert!(a.acquire(Duration::ZERO).unwrap());
    let took = started.elapsed();
    println!("acquire with a frozen master took {took:?} (read timeout 0.3 s)");
    // Generous for a busy machine; without the one deadline it would be
    // the read timeout per call plus a replay, and no bound at all while
    // the master stays frozen.
    assert!(took < Duration::from_secs(2), "{took:?}");
    let started = Instant::now();
    assert!(a.release().unwrap());
    assert!(started.elapsed() < Duration::from_secs(2));
    servers[2].resume();
}

#[test]
fn a_restarted_master_is_used_again() {
    let mut servers = masters(3);
    let key = unique_key("redlock-restart");
    let mut a = redlock(&servers, &key, 10.0, LockOptions::default());
    assert!(a.acquire(Duration::ZERO).unwrap());
    assert!(a.release().unwrap());
    servers[0].restart();
    assert!(a.acquire(Duration::ZERO).unwrap());
    assert_eq!(holders(&servers, &key), 3, "the restarted master took part");
    assert!(a.release().unwrap());
}

/// Another process's hold of `key` on the given masters.
fn hold_elsewhere(servers: &[&RedisServer], key: &[u8], token: &str, ttl_ms: u64) {
    let key = std::str::from_utf8(key).unwrap();
    for s in servers {
        let ok: Option<String> = s.cmd(&["SET", key, token, "NX", "PX", &ttl_ms.to_string()]);
        assert!(ok.is_some());
    }
}

/// That process's release on every master (what its `release()` sends).
fn release_elsewhere(servers: &[RedisServer], key: &[u8], token: &str) -> usize {
    servers
        .iter()
        .filter(|s| release_as(s, key, token.as_bytes(), lock_calls::Successor::Wake))
        .count()
}

#[test]
fn a_held_lock_is_refused_and_a_waiter_is_woken_by_the_release() {
    let servers = masters(5);
    let key = unique_key("redlock-wait");
    hold_elsewhere(&servers.iter().collect::<Vec<_>>(), &key, "holder", 30_000);
    // A retry_delay far above the measured hand-over: only the release's
    // wake-up can explain it.
    let opts = options(&[("retry_delay", 5.0)]);
    let mut a = redlock(&servers, &key, 10.0, opts.clone());
    assert!(!a.acquire(Duration::ZERO).unwrap());
    assert_eq!(holders(&servers, &key), 5, "a refused try takes nothing");
    let (u, k) = (urls(&servers), key.clone());
    let waiter = std::thread::spawn(move || {
        let mut l = Lock::new(k, 10.0, &u, opts).unwrap();
        let got = l.acquire(Duration::from_secs(8)).unwrap();
        (got, Instant::now(), l)
    });
    let queue = format!("{}~~q", std::str::from_utf8(&key).unwrap());
    let deadline = Instant::now() + Duration::from_secs(5);
    while servers[0].cmd::<i64>(&["ZCARD", &queue]) == 0 {
        assert!(Instant::now() < deadline, "the waiter never queued");
        std::thread::sleep(Duration::from_millis(2));
    }
    std::thread::sleep(Duration::from_millis(50));
    let released_at = Instant::now();
    assert_eq!(release_elsewhere(&servers, &key, "holder"), 5);
    let (got, acquired_at, mut l) = waiter.join().unwrap();
    assert!(got);
    let woken_after = acquired_at - released_at;
    println!("Redlock waiter acquired {woken_after:?} after the release (retry_delay 5 s)");
    // Generous for a busy machine, far below the 5 s fallback.
    assert!(woken_after < Duration::from_secs(2), "{woken_after:?}");
    // The holder's release above goes to one master after another, so the
    // woken waiter may try while the last masters still hold the old token:
    // it then holds a quorum, not all 5 (correct Redlock, seen under load).
    let held = holders(&servers, &key);
    assert!((3..=5).contains(&held), "the waiter holds {held} of 5");
    assert_eq!(
        servers[0].cmd::<i64>(&["ZCARD", &queue]),
        0,
        "it left the queue"
    );
    assert!(l.release().unwrap());
}

#[test]
fn a_wait_runs_out_when_a_quorum_stays_held() {
    let servers = masters(3);
    let key = unique_key("redlock-wait-out");
    hold_elsewhere(&[&servers[0], &servers[1]], &key, "holder", 30_000);
    let mut a = redlock(&servers, &key, 10.0, options(&[("retry_delay", 0.1)]));
    let started = Instant::now();
    assert!(!a.acquire(Duration::from_millis(600)).unwrap());
    let took = started.elapsed();
    assert!(
        took >= Duration::from_millis(600) && took < Duration::from_secs(2),
        "{took:?}"
    );
    let key_s = std::str::from_utf8(&key).unwrap();
    assert_eq!(
        servers[2].cmd::<i64>(&["EXISTS", key_s]),
        0,
        "the minority taken was undone"
    );
    for s in &servers {
        assert_eq!(
            s.cmd::<i64>(&["EXISTS", &format!("{key_s}~~q")]),
            0,
            "no queue left"
        );
    }
}

#[test]
fn an_expired_holder_is_replaced_without_a_release() {
    let servers = masters(3);
    let key = unique_key("redlock-expiry");
    hold_elsewhere(&servers.iter().collect::<Vec<_>>(), &key, "holder", 300);
    let mut a = redlock(&servers, &key, 10.0, options(&[("retry_delay", 5.0)]));
    let started = Instant::now();
    assert!(a.acquire(Duration::from_secs(5)).unwrap());
    let took = started.elapsed();
    println!("acquired {took:?} after the start, the holder's lease was 300 ms");
    assert!(took < Duration::from_millis(1000), "{took:?}");
    assert!(a.release().unwrap());
}

#[test]
fn fencing_is_refused_over_several_masters() {
    let servers = masters(3);
    let mut options = LockOptions::default();
    options.set("fencing", OptionValue::Bool(true)).unwrap();
    let err = Lock::new(b"k".to_vec(), 10.0, &urls(&servers), options).unwrap_err();
    assert!(matches!(err, LockError::Unsupported(_)), "{err:?}");
    assert!(err.to_string().contains("strictly greater"), "{err}");
}

#[test]
fn the_same_master_twice_is_refused() {
    let server = RedisServer::start();
    let other = RedisServer::start();
    let p = server.port;
    // One server under two names, or two of its databases, is one master.
    for twice in [
        vec![server.url(), format!("{}/0", server.url())],
        vec![
            format!("redis://127.0.0.1:{p}"),
            format!("redis://localhost:{p}"),
            other.url(),
        ],
        vec![
            format!("redis://127.0.0.1:{p}/0"),
            format!("redis://127.0.0.1:{p}/1"),
            other.url(),
        ],
    ] {
        let err = Lock::new(b"k".to_vec(), 10.0, &twice, LockOptions::default()).unwrap_err();
        assert!(
            matches!(&err, LockError::InvalidArgument { param, .. } if param == "servers")
                && err.to_string().contains("twice"),
            "{twice:?}: {err}"
        );
    }
    // Two servers on one host are two masters.
    assert!(
        Lock::new(
            b"k".to_vec(),
            10.0,
            &[server.url(), other.url()],
            LockOptions::default()
        )
        .is_ok()
    );
}

#[test]
fn auto_renew_keeps_the_lease_on_every_master() {
    let servers = masters(3);
    let key = unique_key("redlock-renew");
    let mut options = options(&[]);
    options.set("auto_renew", OptionValue::Bool(true)).unwrap();
    // Renewed every 0.5 s: a busy machine may stall the renewal thread for
    // a few hundred ms without the 1.5 s lease running out.
    let mut a = redlock(&servers, &key, 1.5, options);
    assert!(a.acquire(Duration::ZERO).unwrap());
    std::thread::sleep(Duration::from_millis(3500));
    assert!(a.is_acquired().unwrap());
    assert_eq!(holders(&servers, &key), 3, "renewed on every master");
    assert!(a.release().unwrap());
}

/// A frozen master never costs the lease while a majority answers: a
/// renewal round waits at most half of what is left of the lease (not the
/// read timeout, 2 s here, which is most of the 3 s lease), so the lease
/// stays renewed on the two live masters, `is_acquired()` stays true the
/// whole time, and nobody else can take the lock.
#[test]
fn a_frozen_master_does_not_cost_a_renewed_lease() {
    let servers = masters(3);
    let key = unique_key("redlock-frozen-renew");
    let mut opts = options(&[("read_timeout", 2.0)]);
    opts.set("auto_renew", OptionValue::Bool(true)).unwrap();
    let mut a = redlock(&servers, &key, 3.0, opts);
    assert!(a.acquire(Duration::ZERO).unwrap());
    servers[0].pause();
    // Another holder (not re-entering this process's hold).
    let mut other_options = options(&[("read_timeout", 0.2)]);
    other_options
        .set("reentrant", OptionValue::Bool(false))
        .unwrap();
    let mut other = redlock(&servers, &key, 3.0, other_options);
    let until = Instant::now() + Duration::from_secs(7);
    let mut checks = 0;
    while Instant::now() < until {
        assert!(
            a.is_acquired().unwrap(),
            "the lease was lost after {checks} checks"
        );
        checks += 1;
        std::thread::sleep(Duration::from_millis(100));
    }
    // The live masters both still hold our token (renewed past its 3 s).
    let live = [&servers[1], &servers[2]];
    let key_s = String::from_utf8_lossy(&key).into_owned();
    let token = String::from_utf8(a.token().unwrap()).unwrap();
    for server in live {
        assert_eq!(
            server.cmd::<Option<String>>(&["GET", &key_s]),
            Some(token.clone())
        );
    }
    drop(other.acquire(Duration::ZERO).map(|got| assert!(!got)));
    servers[0].resume();
    assert!(a.release().unwrap());
}

/// A loopback port whose listener never accepts, its accept queue full:
/// a new connection's SYN is dropped, so connecting to it hangs until the
/// client's connect timeout, as to a master behind a firewall that drops
/// packets. Kept open while the value lives.
struct NeverAccepts {
    fd: i32,
    port: u16,
    _queued: Vec<std::net::TcpStream>,
}

impl NeverAccepts {
    fn start() -> Self {
        // SAFETY: plain socket calls on a socket of our own.
        unsafe {
            let fd = libc::socket(libc::AF_INET, libc::SOCK_STREAM, 0);
            assert!(fd >= 0);
            let mut addr: libc::sockaddr_in = std::mem::zeroed();
            addr.sin_family = libc::AF_INET as libc::sa_family_t;
            addr.sin_addr.s_addr = u32::from_ne_bytes([127, 0, 0, 1]);
            let len = std::mem::size_of::<libc::sockaddr_in>() as libc::socklen_t;
            assert_eq!(libc::bind(fd, (&raw const addr).cast(), len), 0);
            // A backlog of 0: one connection fills the accept queue.
            assert_eq!(libc::listen(fd, 0), 0);
            let mut bound: libc::sockaddr_in = std::mem::zeroed();
            let mut blen = len;
            assert_eq!(libc::getsockname(fd, (&raw mut bound).cast(), &mut blen), 0);
            let port = u16::from_be(bound.sin_port);
            let at = std::net::SocketAddr::from(([127, 0, 0, 1], port));
            let mut queued = Vec::new();
            for _ in 0..4 {
                match std::net::TcpStream::connect_timeout(&at, Duration::from_millis(200)) {
                    Ok(stream) => queued.push(stream),
                    Err(_) => break,
                }
            }
            let probe = Instant::now();
            assert!(
                std::net::TcpStream::connect_timeout(&at, Duration::from_millis(300)).is_err()
                    && probe.elapsed() >= Duration::from_millis(250),
                "a connection to the full accept queue should hang"
            );
            Self {
                fd,
                port,
                _queued: queued,
            }
        }
    }

    fn url(&self) -> String {
        format!("redis://127.0.0.1:{}", self.port)
    }
}

impl Drop for NeverAccepts {
    fn drop(&mut self) {
        // SAFETY: our own socket.
        unsafe { libc::close(self.fd) };
    }
}

#[test]
fn renewals_keep_a_lease_while_one_master_never_accepts() {
    // A renewal round is bounded by the leases it keeps: connecting to a
    // master that never answers (connect_timeout 1.5 s, longer than what
    // the round has) must not hold up the renewal on the masters that do,
    // round after round, for several ttls.
    let servers = masters(2);
    let silent = NeverAccepts::start();
    let mut all = urls(&servers);
    all.push(silent.url());
    let key = unique_key("redlock-silent-master");
    let mut opts = options(&[("connect_timeout", 1.5)]);
    opts.set("auto_renew", OptionValue::Bool(true)).unwrap();
    let mut lock = Lock::new(key.clone(), 3.0, &all, opts).unwrap();
    assert!(lock.acquire(Duration::ZERO).unwrap(), "2 of 3 masters");
    let token = String::from_utf8(lock.token().unwrap()).unwrap();
    let name = String::from_utf8(key.clone()).unwrap();
    let start = Instant::now();
    while start.elapsed() < Duration::from_secs(8) {
        assert!(
            lock.is_acquired().unwrap(),
            "the lease was lost {:?} after the acquire, though 2 of 3 masters answer",
            start.elapsed()
        );
        for server in &servers {
            let owner: Option<String> = server.cmd(&["GET", &name]);
            assert_eq!(
                owner.as_deref(),
                Some(&token[..]),
                "held on every live master"
            );
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    assert!(lock.release().unwrap());
}

/// A waiting round whose try on one master got no reply undoes it there;
/// that undo gets no answer either and stays pending (sent again later).
/// When a later round of the same wait wins, that resend must not release
/// the win on that master: undos pending on two masters of three would
/// leave the holder below a quorum while it believes it holds. (Failed
/// with the same token in every round: "master 2 lost the hold the wait
/// won".) With a fixed `owner` the later rounds take a fresh nonce (at
/// da6b638, which had none, that wait ended with the master's failure).
fn a_rounds_pending_undo_never_removes_a_later_rounds_win(owner: Option<&str>) {
    let servers = masters(3);
    let proxies: Vec<common::proxy::Proxy> =
        servers.iter().map(common::proxy::Proxy::start).collect();
    let via: Vec<String> = proxies.iter().map(|p| p.url()).collect();
    let key = unique_key("redlock-pending-undo");
    let name = String::from_utf8(key.clone()).unwrap();
    let mut opts = options(&[("retry_delay", 0.05)]);
    opts.set("reentrant", OptionValue::Bool(false)).unwrap();
    if let Some(owner) = owner {
        opts.set("owner", OptionValue::Text(owner.as_bytes().to_vec()))
            .unwrap();
    }
    let mut waiter = Lock::new(key.clone(), 10.0, &via, opts).unwrap();
    // Scripts checked on every master before the faults.
    assert!(waiter.acquire(Duration::ZERO).unwrap());
    assert!(waiter.release().unwrap());
    let mut rival = redlock(&servers, &key, 10.0, options(&[]));
    assert!(rival.acquire(Duration::ZERO).unwrap());
    // On the third master: everything about the key refused (connection
    // closed, no reply) for 250 ms, the waiter's tries and their replays
    // included; its undos (they name the queue key) for 1.2 s.
    proxies[2].refuse_requests_with(&[&key], Duration::from_millis(250));
    proxies[2].refuse_requests_with(&[b"~~q"], Duration::from_millis(1_200));
    let releaser = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(400));
        assert!(rival.release().unwrap());
    });
    assert!(waiter.acquire(Duration::from_secs(5)).unwrap());
    releaser.join().unwrap();
    assert!(
        proxies[2].refused() >= 3,
        "a try, its replay and an undo refused"
    );
    let token = String::from_utf8(waiter.token().unwrap()).unwrap();
    // A hold on one master: its token and (a fixed owner's) its nonce.
    let hold = |server: &RedisServer| {
        let owner = server.cmd::<Option<String>>(&["GET", &name]);
        let nonce = server.cmd::<Option<String>>(&["GET", &format!("{name}~~o")]);
        (owner.as_deref() == Some(&token[..])).then_some(nonce)
    };
    // The masters the wait won on: a quorum, not always all three (on a
    // busy machine a round can reach a master before the rival's release
    // does). With a fixed owner every round writes the same token, and
    // the nonce tells them apart: the wait's is the one a quorum holds. A
    // master that holds another is an earlier round's leftover, which
    // that round's pending undo removes, as it must.
    let holds: Vec<Option<Option<String>>> = servers.iter().map(hold).collect();
    let quorum_nonce = holds
        .iter()
        .flatten()
        .find(|n| holds.iter().flatten().filter(|m| m == n).count() >= 2)
        .cloned();
    let won: Vec<usize> = (0..servers.len())
        .filter(|&i| quorum_nonce.is_some() && holds[i] == quorum_nonce)
        .collect();
    assert!(won.len() >= 2, "won on a quorum: {holds:?}");
    let owns = |server: &RedisServer| hold(server) == quorum_nonce;
    // Past the refusals: the pending undos have been sent again by now.
    std::thread::sleep(Duration::from_millis(1_800));
    for i in won {
        assert!(owns(&servers[i]), "master {i} lost the hold the wait won");
    }
    assert!(waiter.is_acquired().unwrap());
    assert!(waiter.release().unwrap());
}

#[test]
fn a_rounds_pending_undo_never_removes_a_later_rounds_win_of_a_random_token() {
    a_rounds_pending_undo_never_removes_a_later_rounds_win(None);
}

#[test]
fn a_rounds_pending_undo_never_removes_a_later_rounds_win_of_a_fixed_owner() {
    a_rounds_pending_undo_never_removes_a_later_rounds_win(Some("job-7"));
}

/// A Redlock wait goes on through dropped connections, as a wait on one
/// server does: while two of three masters drop every request (behind
/// proxies that close each connection a request comes on), the woken
/// waiter's try reaches no quorum; it pauses and tries again, and takes
/// the lock once they answer, within its wait. (Before the quorum waited
/// on the lease engine's loop, that try ended the wait with the failure.)
#[test]
fn a_wait_goes_on_through_dropped_connections() {
    let (servers, proxies, key, waiter) = queued_behind(
        30_000,
        10.0,
        &[("retry_delay", 5.0)],
        Duration::from_secs(8),
    );
    // Every request (a RESP array) to two masters is dropped for 1.5 s.
    let dropped_until = Instant::now() + Duration::from_millis(1500);
    for proxy in &proxies[..2] {
        proxy.refuse_requests_with(&[b"*"], Duration::from_millis(1500));
    }
    assert_eq!(release_elsewhere(&servers, &key, "holder"), 3);
    let (got, acquired_at, mut l) = waiter.join().unwrap();
    assert!(matches!(got, Ok(true)), "the wait went on: {got:?}");
    assert!(acquired_at >= dropped_until, "only once they answered");
    assert!(proxies[0].refused() + proxies[1].refused() > 0);
    assert!(l.release().unwrap());
}

/// A Redlock waiter W behind three proxies, queued behind a holder
/// elsewhere whose lease ends on every master 0.8 s after W starts (W's
/// first try found the lock held; its next try goes out when that lease
/// ends), with `ttl` and `read_timeout`. Answers the masters, their
/// proxies, the key, and W's acquire of up to `wait` (its result, when it
/// returned, and W).
/// `n` milliseconds.
fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

type QueuedWaiter = (
    Vec<RedisServer>,
    Vec<common::proxy::Proxy>,
    Vec<u8>,
    std::thread::JoinHandle<(Result<bool, LockError>, Instant, Lock)>,
);

fn queued_waiter(ttl: f64, read_timeout: f64, wait: Duration) -> QueuedWaiter {
    let opts = [("retry_delay", 5.0), ("read_timeout", read_timeout)];
    queued_behind(800, ttl, &opts, wait)
}

/// [`queued_waiter`] behind a hold of `holder_ms`, W with options `opts`.
fn queued_behind(holder_ms: u64, ttl: f64, opts: &[(&str, f64)], wait: Duration) -> QueuedWaiter {
    let servers = masters(3);
    let proxies: Vec<common::proxy::Proxy> =
        servers.iter().map(common::proxy::Proxy::start).collect();
    let key = unique_key("redlock-queued");
    hold_elsewhere(
        &servers.iter().collect::<Vec<_>>(),
        &key,
        "holder",
        holder_ms,
    );
    let through: Vec<String> = proxies.iter().map(common::proxy::Proxy::url).collect();
    let (k, opts) = (key.clone(), options(opts));
    let waiter = std::thread::spawn(move || {
        let mut l = Lock::new(k, ttl, &through, opts).unwrap();
        let got = l.acquire(wait);
        (got, Instant::now(), l)
    });
    let queue = format!("{}~~q", std::str::from_utf8(&key).unwrap());
    let deadline = Instant::now() + Duration::from_secs(5);
    while servers
        .iter()
        .all(|s| s.cmd::<i64>(&["ZCARD", &queue]) == 0)
    {
        assert!(Instant::now() < deadline, "the waiter never queued");
        std::thread::sleep(Duration::from_millis(2));
    }
    std::thread::sleep(Duration::from_millis(50));
    (servers, proxies, key, waiter)
}

/// A Redlock win whose try's replies came after a quarter of the ttl is
/// topped up on every master before it is believed, and its lease counts
/// from the top-up: the replies to W's (ttl 2 s) try after the holder's
/// lease ended (it wins) are held
/// 0.8 s on every master, and when W's acquire returns true its lease on
/// every master is close to 2 s again (the try's own would be under 1.2 s).
#[test]
fn a_late_quorum_win_is_topped_up_on_every_master() {
    let (servers, proxies, key, waiter) = queued_waiter(2.0, 3.0, Duration::from_secs(5));
    for proxy in &proxies {
        proxy.hold_reply_to_all(&[b"$3\r\nSET\r\n", &key, b"$2\r\nNX\r\n"], ms(800));
    }
    let (got, _, mut w) = waiter.join().unwrap();
    assert!(matches!(got, Ok(true)), "{got:?}");
    let name = String::from_utf8(key.clone()).unwrap();
    let leases: Vec<i64> = servers.iter().map(|s| s.cmd(&["PTTL", &name])).collect();
    let held: usize = proxies.iter().map(|p| p.holds().len()).sum();
    assert_eq!(held, 3, "the try's replies were held on every master");
    assert!(
        leases.iter().all(|&ms| ms > 1_500),
        "the lease on every master after the top-up: {leases:?}"
    );
    assert!(w.release().unwrap());
}

/// When the top-up's replies come after the ttl too, the win is never
/// believed: the replies to W's (ttl 1 s) try after the holder's lease
/// ended (it wins) are held 0.4 s and
/// those to its top-up 1.2 s on every master; a competitor C gets the lock
/// once W's lease ends, and W's acquire does not return true while C holds
/// it (it gives the late win back and waits on).
#[test]
fn a_quorum_win_whose_top_up_comes_late_never_counts() {
    use redislock_core::testing::protocol::scripts::REFRESH;
    let began = Instant::now();
    let (servers, proxies, key, waiter) = queued_waiter(1.0, 3.0, Duration::from_millis(2_500));
    for proxy in &proxies {
        proxy.hold_reply_to_all(&[b"$3\r\nSET\r\n", &key, b"$2\r\nNX\r\n"], ms(400));
    }
    // While the try's replies are held (one hold at a time per proxy; the
    // try has run on every master), the top-up's are armed, and C comes.
    let deadline = Instant::now() + Duration::from_secs(3);
    while !proxies.iter().all(common::proxy::Proxy::holding_reply) {
        assert!(Instant::now() < deadline, "W's try never took the lock");
        std::thread::sleep(Duration::from_millis(1));
    }
    for proxy in &proxies {
        proxy.hold_reply_to_all(
            &[REFRESH.hash().as_bytes(), &key],
            Duration::from_millis(1_200),
        );
    }
    let mut c = redlock(&servers, &key, 10.0, options(&[]));
    let (c_at, c_released) = common::competitor_turn(&mut c, began);
    let (w_got, w_when, mut w) = waiter.join().unwrap();
    let w_at = w_when.duration_since(began);
    let held: usize = proxies.iter().map(|p| p.holds().len()).sum();
    assert!(
        held >= 4,
        "the try's replies and some top-up's were held: {held}; W {w_got:?} at {w_at:?}, \
         C at {c_at:?}"
    );
    common::never_believed_while_held(matches!(w_got, Ok(true)), w_at, (c_at, c_released));
    let _ = w.release();
}

/// A Redlock waiter that no master took into its wake-up queue sleeps in
/// its process between tries; a signal whose handler ends the wait (the
/// host's `wait_should_end`) ends that sleep too, as it ends a blocked
/// wait. Here every request naming the queue (`K~~q`) is refused on all
/// three masters while the lock is held elsewhere: the handler asks at
/// 0.3 s, and the 10 s wait ends at once with `Interrupted`. (It slept
/// unasked: the wait went on to its end.)
#[test]
fn a_signal_ends_a_wait_that_no_master_queued() {
    common::php_host::install();
    let servers = masters(3);
    let proxies: Vec<common::proxy::Proxy> =
        servers.iter().map(common::proxy::Proxy::start).collect();
    let through: Vec<String> = proxies.iter().map(common::proxy::Proxy::url).collect();
    let key = unique_key("redlock-unqueued");
    let mut w = Lock::new(
        key.clone(),
        10.0,
        &through,
        options(&[("retry_delay", 5.0)]),
    )
    .unwrap();
    // The masters' checks made before the refusals (they name the queue).
    let mut first = Lock::new(unique_key("first"), 10.0, &through, options(&[])).unwrap();
    assert!(first.acquire(Duration::ZERO).unwrap());
    assert!(first.release().unwrap());
    hold_elsewhere(&servers.iter().collect::<Vec<_>>(), &key, "holder", 30_000);
    for proxy in &proxies {
        proxy.refuse_requests_with(&[b"~~q"], Duration::from_secs(20));
    }
    let began = Instant::now();
    common::php_host::end_wait_after(Some(Duration::from_millis(300)));
    let got = w.acquire(Duration::from_secs(10));
    let took = began.elapsed();
    common::php_host::end_wait_after(None);
    assert!(
        matches!(got, Err(LockError::Interrupted)),
        "{got:?} after {took:?}"
    );
    assert!(took < Duration::from_secs(3), "ended after {took:?}");
    assert!(
        proxies
            .iter()
            .map(common::proxy::Proxy::refused)
            .sum::<u32>()
            >= 3
    );
}

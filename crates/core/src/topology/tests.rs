//! The executor's unit tests: calls followed, counted and replayed on
//! local servers that answer as a test says.

use super::executor::{MAX_HOPS, RETRY_PAUSE};
use super::route::Servers;
use super::*;
use crate::net::connection::ServerConfig;
use crate::protocol::call::{Attempt, Call};
use crate::protocol::command::Command;
use std::io::{Read, Write};
use std::os::unix::net::UnixListener;
use std::sync::atomic::{AtomicUsize, Ordering};

/// A server nobody listens on: every call fails at once (refused).
fn unreachable() -> Arc<ServerConfig> {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .unwrap();
    let url = ServerUrl::parse("servers", &format!("redis://127.0.0.1:{port}")).unwrap();
    Arc::new(ServerConfig::new(
        url,
        &crate::config::options::ConnectionOptions::default(),
    ))
}

/// A route that answers every error from a script and records what
/// the executor tried.
#[derive(Debug)]
struct Scripted {
    servers: Vec<Arc<ServerConfig>>,
    next: fn(usize, &Arc<ServerConfig>) -> Next,
    tried: Mutex<Vec<(Vec<u8>, bool, bool)>>,
}

impl PartialEq for Scripted {
    fn eq(&self, other: &Self) -> bool {
        std::ptr::eq(self, other)
    }
}

impl Route for Scripted {
    fn servers(&self, _key: &[u8]) -> Result<Servers<'_>> {
        Ok(Servers::Kept(&self.servers))
    }
    fn on_error(&self, tried: &Tried<'_>, _err: &LockError) -> Next {
        let mut log = self.tried.lock().unwrap();
        log.push((tried.key.to_vec(), tried.asking, tried.replay));
        (self.next)(log.len(), tried.server)
    }
    fn scope(&self) -> String {
        "scripted".into()
    }
    fn names(&self) -> Vec<String> {
        vec!["scripted".into()]
    }
}

/// A server that answers every command `+PONG`, on a Unix socket of
/// its own (a TCP port could be one that [`unreachable`] let go, which
/// other tests expect nobody to answer). Its threads end with the test
/// program; its socket file with the value.
struct Answering {
    server: Arc<ServerConfig>,
    /// The PINGs it got.
    pings: Arc<AtomicUsize>,
    path: std::path::PathBuf,
}

impl Drop for Answering {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.path);
    }
}

fn answering() -> Answering {
    static SERVERS: AtomicUsize = AtomicUsize::new(0);
    let path = std::env::temp_dir().join(format!(
        "redislock-topology-test-{}-{}.sock",
        std::process::id(),
        SERVERS.fetch_add(1, Ordering::SeqCst)
    ));
    let _ = std::fs::remove_file(&path);
    let listener = UnixListener::bind(&path).unwrap();
    let pings = Arc::new(AtomicUsize::new(0));
    let counted = pings.clone();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { return };
            let counted = counted.clone();
            std::thread::spawn(move || {
                let mut buf = [0u8; 1024];
                while let Ok(n @ 1..) = stream.read(&mut buf) {
                    let got = buf[..n].windows(4).filter(|w| w == b"PING").count();
                    counted.fetch_add(got, Ordering::SeqCst);
                    if stream.write_all(&b"+PONG\r\n".repeat(got)).is_err() {
                        return;
                    }
                }
            });
        }
    });
    let url = ServerUrl::parse("servers", &format!("unix://{}", path.display())).unwrap();
    // Interned, as every server of a topology: the pool keys idle
    // connections by the config's address, which a dropped config
    // would leave to the next one allocated there.
    let server = crate::net::connection::intern(ServerConfig::new(
        url,
        &crate::config::options::ConnectionOptions::default(),
    ));
    Answering {
        server,
        pings,
        path,
    }
}

fn topology(servers: usize, next: fn(usize, &Arc<ServerConfig>) -> Next) -> Topology {
    topology_of((0..servers).map(|_| unreachable()).collect(), next)
}

fn topology_of(
    servers: Vec<Arc<ServerConfig>>,
    next: fn(usize, &Arc<ServerConfig>) -> Next,
) -> Topology {
    let count = servers.len();
    let route = Scripted {
        servers,
        next,
        tried: Mutex::new(Vec::new()),
    };
    Topology {
        route: Box::new(route),
        scope: "scripted".into(),
        names: vec!["scripted".to_owned(); count].into(),
        keys: PerProcess::new(|| Mutex::new(Vec::new())),
    }
}

fn tried(t: &Topology) -> Vec<(Vec<u8>, bool, bool)> {
    let any: &dyn Any = &*t.route;
    let route = any.downcast_ref::<Scripted>().unwrap();
    route.tried.lock().unwrap().clone()
}

fn ping(_: Attempt) -> Call<()> {
    Call::new(vec![Command::of(&[b"PING"])], |_| Ok(()))
}

/// A PING whose answer is `true` (a server that was not asked counts
/// as `false` in [`Topology::run_where`]).
fn ping_true(_: Attempt) -> Call<bool> {
    Call::new(vec![Command::of(&[b"PING"])], |_| Ok(true))
}

fn pings(servers: &[Answering]) -> Vec<usize> {
    servers
        .iter()
        .map(|s| s.pings.load(Ordering::SeqCst))
        .collect()
}

#[test]
fn a_call_on_some_servers_reaches_exactly_those() {
    let servers: Vec<Answering> = (0..3).map(|_| answering()).collect();
    let t = topology_of(
        servers.iter().map(|s| s.server.clone()).collect(),
        |_, _| Next::Done,
    );
    let votes = t.run_where(Role::Command, b"k", &[true, false, true], false, &ping_true);
    assert_eq!(pings(&servers), [1, 0, 1]);
    assert_eq!(votes.oks(), [true; 3], "the second counts as answered");
    assert_eq!(votes.count(|asked| *asked), 2);
    assert_eq!(votes.quorum(), 2, "the quorum of all three");

    // One server: the plain call of one server; none: nothing sent.
    let votes = t.run_where(Role::Command, b"k", &[false, true], false, &ping_true);
    assert_eq!(pings(&servers), [1, 1, 1]);
    assert_eq!(votes.count(|asked| *asked), 1);
    let votes = t.run_where(Role::Command, b"k", &[false; 3], false, &ping_true);
    assert_eq!(pings(&servers), [1, 1, 1]);
    assert_eq!(votes.oks(), [true; 3]);
    assert!(tried(&t).is_empty());
}

#[test]
fn a_call_on_some_servers_follows_those_that_fail() {
    let answers: Vec<Answering> = (0..2).map(|_| answering()).collect();
    let servers = vec![
        unreachable(),
        answers[0].server.clone(),
        answers[1].server.clone(),
    ];
    let t = topology_of(servers, |n, _| match n {
        1 => Next::Reroute,
        _ => Next::Done,
    });
    let votes = t.run_where(Role::Command, b"k", &[true, true, false], false, &ping_true);
    assert_eq!(pings(&answers), [1, 0]);
    assert_eq!(tried(&t).len(), 2, "the unreachable one, sent again once");
    assert_eq!(votes.oks(), [false, true, true]);
    assert_eq!(votes.count(|asked| *asked), 1);
}

#[test]
fn a_call_is_sent_elsewhere_at_most_max_hops_times() {
    let t = topology(1, |_, at| Next::Redirect(at.clone()));
    let err = t.run_on(0, Role::Command, b"k", &ping).unwrap_err();
    assert_eq!(tried(&t).len(), MAX_HOPS as usize);
    assert!(err.to_string().contains("sent elsewhere 8 times"), "{err}");
}

#[test]
fn a_replay_stays_a_replay_and_asking_lasts_one_try() {
    let t = topology(1, |n, at| match n {
        1 => Next::Replay(at.clone()),
        2 => Next::Ask(at.clone()),
        3 => Next::Redirect(at.clone()),
        _ => Next::Done,
    });
    let votes = t.run(Role::Command, b"k", &ping);
    assert!(votes.into_single().unwrap_err().is_connection_error());
    let how: Vec<(bool, bool)> = tried(&t).into_iter().map(|(_, a, r)| (a, r)).collect();
    assert_eq!(
        how,
        [(false, false), (false, true), (true, true), (false, true)]
    );
}

#[test]
fn a_retry_pauses_first() {
    let t = topology(1, |n, _| if n == 1 { Next::Retry } else { Next::Done });
    let started = std::time::Instant::now();
    assert!(t.run_on(0, Role::Command, b"k", &ping).is_err());
    assert!(started.elapsed() >= RETRY_PAUSE);
    assert_eq!(tried(&t).len(), 2);
}

#[test]
fn every_server_of_a_key_is_followed_and_counted() {
    let t = topology(3, |n, _| if n <= 3 { Next::Reroute } else { Next::Done });
    let votes = t.run(Role::Command, b"k", &ping);
    assert_eq!(votes.quorum(), 2);
    assert_eq!(votes.answered(), 0);
    assert_eq!(tried(&t).len(), 6);
}

#[test]
fn a_batch_follows_each_key_and_keeps_replays() {
    let t = topology(2, |n, at| {
        if n <= 4 {
            Next::Replay(at.clone())
        } else {
            Next::Done
        }
    });
    let keys: [&[u8]; 2] = [b"a", b"b"];
    let votes = t.run_batch(Role::Command, &keys, &|indices, _| {
        let cmds = indices.iter().map(|_| Command::of(&[b"PING"])).collect();
        Call::new(cmds, |replies| Ok(replies.iter().map(|_| ()).collect()))
    });
    assert_eq!(votes.len(), 2);
    assert!(votes.iter().all(|v| v.answered() == 0 && v.quorum() == 2));
    let log = tried(&t);
    // Two keys on two servers: four legs, each replayed once.
    assert_eq!(log.len(), 8);
    assert!(log[..4].iter().all(|(_, _, replay)| !replay));
    assert!(log[4..].iter().all(|(_, _, replay)| *replay));
}

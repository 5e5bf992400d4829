//! Test fixture: a TCP proxy on a loopback port in front of a
//! [`RedisServer`](super::RedisServer), with faults the test switches at run
//! time: delayed replies, delayed requests, a reply cut midway, a black
//! hole, every connection dropped, the reply to one chosen request held
//! back, chosen requests refused for a while (their connection closed,
//! nothing forwarded).
//!
//! Each client connection gets its own connection to the server and two
//! threads: one copies requests to the server, the other copies replies
//! back and applies the fault in force when a reply arrives. The server
//! may restart on its port: new connections reach the new process. The
//! proxy stops every thread it started when dropped.

use std::io::{ErrorKind, Read, Write};
use std::net::{Shutdown, SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// How often idle loops (accept, a delay, a black hole) look at the flags.
const TICK: Duration = Duration::from_millis(2);

/// What happens to traffic now.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Fault {
    /// Everything is forwarded at once.
    Pass,
    /// Replies are held back this long after they arrive.
    Delay(Duration),
    /// Requests are held back this long after they arrive (a request in
    /// flight: the server runs it later than its sender built it).
    DelayRequests(Duration),
    /// The next reply (on any connection) is forwarded in part, then both
    /// sides of its connection are closed; then back to `Pass`.
    CutNext,
    /// Requests are read and discarded; nothing is answered or closed.
    BlackHole,
}

/// One client connection and its server connection.
struct Link {
    client: TcpStream,
    server: TcpStream,
    pumps: [JoinHandle<()>; 2],
}

impl Link {
    fn close(&self) {
        let _ = self.client.shutdown(Shutdown::Both);
        let _ = self.server.shutdown(Shutdown::Both);
    }
}

struct Shared {
    server: SocketAddr,
    fault: Mutex<Fault>,
    stop: AtomicBool,
    links: Mutex<Vec<Link>>,
    accepted: AtomicU32,
    cuts: AtomicU32,
    /// Armed by [`Proxy::hold_reply_to`]: the bytes a request must contain
    /// (every part) and how long its reply is held back. Taken by the
    /// first request that matches.
    hold: Armed,
    /// Set by [`Proxy::delay_request_to_all`]: the parts a request must
    /// contain (every part) and how long it is held back in flight. Taken
    /// by the first request that matches.
    delay: Armed,
    /// A reply is being held back now.
    holding: AtomicBool,
    /// Replies held back so far.
    held: AtomicU32,
    /// When each hold-back began (its reply arrived) and how long it was.
    held_at: Mutex<Vec<(Instant, Duration)>>,
    /// Set by [`Proxy::refuse_requests_with`]: requests containing any of
    /// the bytes of a rule are refused until its end.
    refuse: Mutex<Vec<Refusal>>,
    /// Requests refused so far.
    refused: AtomicU32,
}

impl Shared {
    fn fault(&self) -> MutexGuard<'_, Fault> {
        self.fault.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn links(&self) -> MutexGuard<'_, Vec<Link>> {
        self.links.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn stopped(&self) -> bool {
        self.stop.load(Ordering::Relaxed)
    }

    /// `by` when `request` contains every part of the armed pattern
    /// (disarming it).
    fn hold_for(&self, request: &[u8]) -> Option<Duration> {
        take_if_matched(&self.hold, request)
    }

    /// How long `request` is held back in flight, if it is the one
    /// [`Proxy::delay_request_to_all`] waits for.
    fn delay_for(&self, request: &[u8]) -> Option<Duration> {
        take_if_matched(&self.delay, request)
    }

    /// Whether `request` is to be refused now ([`Proxy::refuse_requests_with`]).
    fn refuses(&self, request: &[u8]) -> bool {
        let mut refuse = self.refuse.lock().unwrap_or_else(|p| p.into_inner());
        let now = Instant::now();
        refuse.retain(|r| now < r.until);
        refuse.iter().any(|r| r.matches(request))
    }
}

/// One rule of [`Proxy::refuse_requests_with`] or
/// [`Proxy::refuse_requests_with_all`].
struct Refusal {
    patterns: Vec<Vec<u8>>,
    /// A request must contain every pattern (else any one).
    all: bool,
    until: Instant,
}

impl Refusal {
    fn matches(&self, request: &[u8]) -> bool {
        let found = |p: &Vec<u8>| contains(request, p);
        match self.all {
            true => self.patterns.iter().all(found),
            false => self.patterns.iter().any(found),
        }
    }
}

/// A one-shot rule: the parts a request must all contain, and a duration.
type Armed = Mutex<Option<(Vec<Vec<u8>>, Duration)>>;

/// A one-shot rule armed in `slot` (the parts a request must all
/// contain, and a duration): its duration when `request` matches it,
/// disarming it.
fn take_if_matched(slot: &Armed, request: &[u8]) -> Option<Duration> {
    let mut armed = slot.lock().unwrap_or_else(|p| p.into_inner());
    let (parts, by) = armed.as_ref()?;
    let found = !parts.is_empty() && parts.iter().all(|part| contains(request, part));
    let by = *by;
    found.then(|| {
        *armed = None;
        by
    })
}

/// Whether `bytes` contains `part` (a non-empty one).
fn contains(bytes: &[u8], part: &[u8]) -> bool {
    !part.is_empty() && bytes.windows(part.len()).any(|w| w == part)
}

/// The hold-back one connection owes its next reply ([`Proxy::hold_reply_to`]).
type NextReply = Arc<Mutex<Option<Duration>>>;

/// A proxy listening on 127.0.0.1:`port`, forwarding to a server's port.
pub struct Proxy {
    /// The port clients connect to.
    pub port: u16,
    shared: Arc<Shared>,
    acceptor: Option<JoinHandle<()>>,
}

impl Proxy {
    /// Starts a proxy to `server` on a random free port of [`super::PORTS`].
    pub fn start(server: &super::RedisServer) -> Self {
        let ports = super::PORTS;
        let (listener, port) = (0..50)
            .find_map(|_| {
                let port = ports.start + (getrandom::u32().unwrap() % ports.len() as u32) as u16;
                TcpListener::bind(("127.0.0.1", port))
                    .ok()
                    .map(|l| (l, port))
            })
            .expect("no free port for the proxy in 50 tries");
        listener.set_nonblocking(true).unwrap();
        let shared = Arc::new(Shared {
            server: ([127, 0, 0, 1], server.port).into(),
            fault: Mutex::new(Fault::Pass),
            stop: AtomicBool::new(false),
            links: Mutex::new(Vec::new()),
            accepted: AtomicU32::new(0),
            cuts: AtomicU32::new(0),
            hold: Mutex::new(None),
            delay: Mutex::new(None),
            holding: AtomicBool::new(false),
            held: AtomicU32::new(0),
            held_at: Mutex::new(Vec::new()),
            refuse: Mutex::new(Vec::new()),
            refused: AtomicU32::new(0),
        });
        let s = shared.clone();
        let acceptor = std::thread::spawn(move || accept_loop(&s, &listener));
        Self {
            port,
            shared,
            acceptor: Some(acceptor),
        }
    }

    /// `redis://127.0.0.1:PORT` of the proxy.
    pub fn url(&self) -> String {
        format!("redis://127.0.0.1:{}", self.port)
    }

    /// Holds every reply back `by` after it arrives from the server.
    pub fn delay(&self, by: Duration) {
        *self.shared.fault() = Fault::Delay(by);
    }

    /// Holds every request back `by` after it arrives from the client
    /// (replies pass).
    pub fn delay_requests(&self, by: Duration) {
        *self.shared.fault() = Fault::DelayRequests(by);
    }

    /// Holds the next request that contains every one of `parts` back
    /// `by` in flight, then forwards it, even when its client gave up
    /// waiting and closed the connection meanwhile (a request late in
    /// flight runs late). Other requests pass.
    pub fn delay_request_to_all(&self, parts: &[&[u8]], by: Duration) {
        let parts = parts.iter().map(|p| p.to_vec()).collect();
        *self.shared.delay.lock().unwrap_or_else(|p| p.into_inner()) = Some((parts, by));
    }

    /// Whether a [`Proxy::delay_request_to_all`] is still waiting for its
    /// request.
    pub fn delay_armed(&self) -> bool {
        self.shared
            .delay
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .is_some()
    }

    /// Forwards part of the next reply, then closes its connection (both
    /// sides); later replies pass.
    pub fn cut_mid_reply(&self) {
        *self.shared.fault() = Fault::CutNext;
    }

    /// Accepts and reads, but never answers nor closes, until [`Proxy::pass`].
    /// Requests read meanwhile are lost.
    pub fn black_hole(&self) {
        *self.shared.fault() = Fault::BlackHole;
    }

    /// Back to forwarding everything at once (a pending cut is disarmed).
    pub fn pass(&self) {
        *self.shared.fault() = Fault::Pass;
    }

    /// Closes every current connection, client and server side.
    pub fn drop_all(&self) {
        self.shared.links().iter().for_each(Link::close);
    }

    /// Client connections accepted so far.
    pub fn accepted(&self) -> u32 {
        self.shared.accepted.load(Ordering::Relaxed)
    }

    /// Replies cut so far.
    pub fn cuts(&self) -> u32 {
        self.shared.cuts.load(Ordering::Relaxed)
    }

    /// Holds back, `by` after it arrives, the reply to the next request (on
    /// any connection) whose bytes contain `pattern` (within one read of
    /// the client's bytes, which holds a whole small request); once: later
    /// replies pass. The reply held back is the next one read on that
    /// connection after the request was forwarded, which is that request's
    /// own for a client that waits for each reply (replies behind it on
    /// that connection wait with it). Other faults apply after the hold.
    pub fn hold_reply_to(&self, pattern: &[u8], by: Duration) {
        self.hold_reply_to_all(&[pattern], by);
    }

    /// [`Proxy::hold_reply_to`] the next request that contains every one
    /// of `parts` (each within the same read of the client's bytes), in
    /// any order: a script's SHA and one of its arguments, say.
    pub fn hold_reply_to_all(&self, parts: &[&[u8]], by: Duration) {
        let parts = parts.iter().map(|p| p.to_vec()).collect();
        *self.shared.hold.lock().unwrap_or_else(|p| p.into_inner()) = Some((parts, by));
    }

    /// Disarms [`Proxy::hold_reply_to`] if no request matched it yet (a
    /// reply being held back now stays held).
    pub fn cancel_hold(&self) {
        *self.shared.hold.lock().unwrap_or_else(|p| p.into_inner()) = None;
    }

    /// When each reply held back so far ([`Proxy::hold_reply_to`]) arrived
    /// from the server, and how long it was held.
    pub fn holds(&self) -> Vec<(Instant, Duration)> {
        self.shared
            .held_at
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }

    /// For `lasting` from now, refuses every request (one read of the
    /// client's bytes) that contains any of `patterns`: it is not
    /// forwarded, and its connection is closed on both sides, as a server
    /// that drops the connection would. Other requests pass (on other
    /// connections: one refused closes its own). Rules add up: each lasts
    /// its own time.
    pub fn refuse_requests_with(&self, patterns: &[&[u8]], lasting: Duration) {
        self.refuse(patterns, false, lasting);
    }

    /// [`Proxy::refuse_requests_with`] for requests that contain every one
    /// of `parts` (within the same read of the client's bytes): one hold's
    /// renewals, by the script's SHA and the hold's token, and nobody
    /// else's.
    pub fn refuse_requests_with_all(&self, parts: &[&[u8]], lasting: Duration) {
        self.refuse(parts, true, lasting);
    }

    fn refuse(&self, patterns: &[&[u8]], all: bool, lasting: Duration) {
        let patterns = patterns.iter().map(|p| p.to_vec()).collect();
        self.shared
            .refuse
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .push(Refusal {
                patterns,
                all,
                until: Instant::now() + lasting,
            });
    }

    /// Requests refused so far ([`Proxy::refuse_requests_with`]).
    pub fn refused(&self) -> u32 {
        self.shared.refused.load(Ordering::Acquire)
    }

    /// Whether a reply is being held back now ([`Proxy::hold_reply_to`]):
    /// its request has run on the server, its sender has not read it.
    pub fn holding_reply(&self) -> bool {
        self.shared.holding.load(Ordering::Acquire)
    }

    /// Replies held back so far ([`Proxy::hold_reply_to`]), counted when
    /// their hold-back ends.
    pub fn replies_held(&self) -> u32 {
        self.shared.held.load(Ordering::Acquire)
    }
}

impl Drop for Proxy {
    fn drop(&mut self) {
        self.shared.stop.store(true, Ordering::Relaxed);
        if let Some(acceptor) = self.acceptor.take() {
            let _ = acceptor.join();
        }
        let links = std::mem::take(&mut *self.shared.links());
        for link in links {
            link.close();
            link.pumps.into_iter().for_each(|p| drop(p.join()));
        }
    }
}

/// Accepts clients until the proxy stops; a client whose server connection
/// fails (the server is down) is closed at once.
fn accept_loop(shared: &Arc<Shared>, listener: &TcpListener) {
    while !shared.stopped() {
        let client = match listener.accept() {
            Ok((client, _)) => client,
            Err(e) if e.kind() == ErrorKind::WouldBlock => {
                std::thread::sleep(TICK);
                continue;
            }
            Err(_) => continue,
        };
        shared.accepted.fetch_add(1, Ordering::Relaxed);
        let Ok(server) = TcpStream::connect_timeout(&shared.server, Duration::from_secs(1)) else {
            continue;
        };
        let _ = client.set_nonblocking(false);
        let _ = client.set_nodelay(true);
        let _ = server.set_nodelay(true);
        let streams = || Some((client.try_clone().ok()?, server.try_clone().ok()?));
        let (Some(up), Some(down)) = (streams(), streams()) else {
            continue;
        };
        // Registered before it forwards anything: `drop_all` closes every
        // connection a client has had a reply on.
        let mut links = shared.links();
        // Reap the links whose threads are done.
        let (done, live): (Vec<_>, Vec<_>) = std::mem::take(&mut *links)
            .into_iter()
            .partition(|l| l.pumps.iter().all(JoinHandle::is_finished));
        *links = live;
        done.into_iter()
            .flat_map(|l| l.pumps)
            .for_each(|p| drop(p.join()));
        let (s1, s2) = (shared.clone(), shared.clone());
        let next_reply: NextReply = Arc::default();
        let n2 = next_reply.clone();
        let pumps = [
            std::thread::spawn(move || requests(&s1, up.0, up.1, &next_reply)),
            std::thread::spawn(move || replies(&s2, down.1, down.0, &n2)),
        ];
        links.push(Link {
            client,
            server,
            pumps,
        });
    }
}

/// Client to server: requests, discarded in a black hole. A request that
/// matches [`Proxy::hold_reply_to`] (and is forwarded) leaves its
/// hold-back for the reply pump before it is forwarded; one that
/// [`Proxy::refuse_requests_with`] refuses closes the connection instead.
fn requests(shared: &Shared, mut client: TcpStream, mut server: TcpStream, next: &NextReply) {
    let mut buf = [0; 16 * 1024];
    while let Ok(n @ 1..) = client.read(&mut buf) {
        let fault = *shared.fault();
        if fault != Fault::BlackHole && shared.refuses(&buf[..n]) {
            shared.refused.fetch_add(1, Ordering::AcqRel);
            break;
        }
        if fault != Fault::BlackHole
            && let Some(by) = shared.hold_for(&buf[..n])
        {
            *next.lock().unwrap_or_else(|p| p.into_inner()) = Some(by);
        }
        if let Fault::DelayRequests(by) = fault {
            std::thread::sleep(by);
        }
        if fault != Fault::BlackHole
            && let Some(by) = shared.delay_for(&buf[..n])
        {
            std::thread::sleep(by);
        }
        if fault != Fault::BlackHole && server.write_all(&buf[..n]).is_err() {
            break;
        }
    }
    let _ = client.shutdown(Shutdown::Both);
    let _ = server.shutdown(Shutdown::Both);
}

/// Server to client: replies, with a hold-back this connection owes
/// ([`Proxy::hold_reply_to`]) and then the fault in force applied to each.
fn replies(shared: &Shared, mut server: TcpStream, mut client: TcpStream, next: &NextReply) {
    let mut buf = [0; 16 * 1024];
    'read: while let Ok(n @ 1..) = server.read(&mut buf) {
        let arrived = Instant::now();
        let owed = next.lock().unwrap_or_else(|p| p.into_inner()).take();
        if let Some(by) = owed {
            shared.holding.store(true, Ordering::Release);
            shared
                .held_at
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .push((arrived, by));
            while arrived.elapsed() < by && !shared.stopped() {
                std::thread::sleep(TICK.min(by - arrived.elapsed().min(by)));
            }
            shared.holding.store(false, Ordering::Release);
            shared.held.fetch_add(1, Ordering::AcqRel);
        }
        loop {
            if shared.stopped() {
                break 'read;
            }
            let mut fault = shared.fault();
            match *fault {
                Fault::BlackHole => continue 'read,
                Fault::Delay(by) if arrived.elapsed() < by => {
                    drop(fault);
                    std::thread::sleep(TICK.min(by - arrived.elapsed().min(by)));
                }
                Fault::CutNext => {
                    *fault = Fault::Pass;
                    shared.cuts.fetch_add(1, Ordering::Relaxed);
                    let part = if n > 1 { (n / 2).max(1) } else { 0 };
                    let _ = client.write_all(&buf[..part]);
                    break 'read;
                }
                _ => match client.write_all(&buf[..n]) {
                    Ok(()) => continue 'read,
                    Err(_) => break 'read,
                },
            }
        }
    }
    // A black hole does not close: the client finds out by its timeout.
    while *shared.fault() == Fault::BlackHole && !shared.stopped() {
        std::thread::sleep(TICK);
    }
    let _ = client.shutdown(Shutdown::Both);
    let _ = server.shutdown(Shutdown::Both);
}

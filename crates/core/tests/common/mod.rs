//! Test fixture: a private `redis-server` on a loopback port, stopped by pid
//! when dropped. Nothing depends on a Redis already running.
//!
//! Several suites may run side by side (two checkouts, CI jobs), so a port
//! that looks free can be taken by someone else's server before ours binds
//! it. Hence: ports are drawn at random from [`PORTS`], below the kernel's
//! ephemeral range (Linux default 32768-60999), so outgoing connections do
//! not take them; a server is ready only when `INFO server` on its port
//! reports the pid of the child we started (and its `--unixsocket` exists);
//! if our child exits (port taken) or another process answers, the child is
//! killed and another port is tried. Ports are also claimed ([`ports`]) for
//! the fixture's whole life, so that a port whose server a test killed is
//! not taken by another suite's server while the test still uses it.

#![allow(dead_code)]

pub mod cluster;
pub mod ports;
pub mod proxy;

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use redislock_core::protocol::call::Attempt;
use redislock_core::protocol::commands::{self, Released, Successor};
use redislock_core::protocol::keys::{self, LockKeys};
use redislock_core::{Lock, LockOptions};

/// Ports the fixture listens on: below the ephemeral range.
const PORTS: std::ops::Range<u16> = 20000..32000;
/// Ports of cluster nodes: their bus port (+10000) stays below the
/// ephemeral range too.
const CLUSTER_PORTS: std::ops::Range<u16> = 20000..22700;
/// Ports tried by `start*` before giving up.
const PORT_TRIES: usize = 20;
/// Attempts of `restart` on its own port while it is momentarily busy.
const RESTART_TRIES: usize = 5;
/// How long one redis-server gets to answer with its own pid.
const READY_TIMEOUT: Duration = Duration::from_secs(10);

/// A running redis-server owned by one test.
pub struct RedisServer {
    child: Option<Child>,
    /// TCP port on 127.0.0.1 (the TLS port for `start_tls`).
    pub port: u16,
    /// Private working directory (unix socket, TLS files).
    pub dir: PathBuf,
    extra: Vec<String>,
    tls: bool,
    /// Sentinel mode: the config file it runs from.
    sentinel_conf: Option<PathBuf>,
    /// Where its port is drawn from.
    ports: std::ops::Range<u16>,
    /// Its claims on its port (and cluster bus port), held until dropped.
    claims: Vec<std::fs::File>,
}

impl RedisServer {
    /// Starts a server with default settings.
    pub fn start() -> Self {
        Self::start_with(&[])
    }

    /// Starts a server with extra command-line arguments.
    pub fn start_with(extra: &[&str]) -> Self {
        let mut server = Self::new(extra, false);
        server.launch(PORT_TRIES, true);
        server
    }

    /// Starts a TLS-only server (`--tls-port`, plain port off) with a fresh
    /// CA and a server certificate for 127.0.0.1 / localhost in `dir`.
    pub fn start_tls() -> Self {
        let mut server = Self::new(&[], true);
        make_certificates(&server.dir);
        server.launch(PORT_TRIES, true);
        server
    }

    /// Starts a TLS-only server with extra arguments, using the CA and
    /// server certificate that [`make_certificates`] wrote into `certs`
    /// (so that several servers share one CA).
    pub fn start_tls_with(extra: &[&str], certs: &std::path::Path) -> Self {
        let mut server = Self::new(extra, true);
        copy_certificates(certs, &server.dir);
        server.launch(PORT_TRIES, true);
        server
    }

    /// Starts a TLS-only Sentinel (certificates from `certs`) watching the
    /// TLS master at `master_port` as `name`; it talks TLS to the master,
    /// its replicas and the other Sentinels (`tls-replication yes`).
    pub fn start_tls_sentinel(
        master_port: u16,
        name: &str,
        quorum: u32,
        certs: &std::path::Path,
    ) -> Self {
        let mut server = Self::new(&["--tls-replication", "yes"], true);
        copy_certificates(certs, &server.dir);
        server.sentinel_conf = Some(server.sentinel_file(master_port, name, quorum, ""));
        server.launch(PORT_TRIES, true);
        server
    }

    /// Starts a Sentinel (`redis-server --sentinel`) watching the master at
    /// `master_port` as `name`; failover needs `quorum` Sentinels to agree.
    /// `conf` adds lines to its config file (e.g. `sentinel auth-pass`).
    pub fn start_sentinel(
        master_port: u16,
        name: &str,
        quorum: u32,
        conf: &str,
        extra: &[&str],
    ) -> Self {
        let mut server = Self::new(extra, false);
        server.sentinel_conf = Some(server.sentinel_file(master_port, name, quorum, conf));
        server.launch(PORT_TRIES, true);
        server
    }

    /// Writes the Sentinel config file into the server's directory.
    fn sentinel_file(&self, master_port: u16, name: &str, quorum: u32, conf: &str) -> PathBuf {
        let file = self.dir.join("sentinel.conf");
        std::fs::write(
            &file,
            format!(
                "sentinel monitor {name} 127.0.0.1 {master_port} {quorum}\n\
                 sentinel down-after-milliseconds {name} 1000\n\
                 sentinel failover-timeout {name} 10000\n\
                 sentinel parallel-syncs {name} 1\n{conf}\n"
            ),
        )
        .unwrap();
        file
    }

    /// Starts a Redis Cluster node (not yet part of a cluster), with a
    /// node timeout of `node_timeout_ms`.
    pub fn start_cluster_node(node_timeout_ms: u32) -> Self {
        let timeout = node_timeout_ms.to_string();
        let mut server = Self::new(
            &[
                "--cluster-enabled",
                "yes",
                "--cluster-config-file",
                "nodes.conf",
                "--cluster-node-timeout",
                &timeout,
                "--repl-diskless-sync-delay",
                "0",
            ],
            false,
        );
        server.ports = CLUSTER_PORTS;
        server.launch(PORT_TRIES, true);
        server
    }

    fn new(extra: &[&str], tls: bool) -> Self {
        let dir = fresh_dir("test");
        Self {
            child: None,
            port: 0,
            dir,
            extra: extra.iter().map(|s| s.to_string()).collect(),
            tls,
            sentinel_conf: None,
            ports: PORTS,
            claims: Vec::new(),
        }
    }

    /// Spawns up to `tries` times, each time on a new random port from
    /// [`PORTS`] when `new_port`, else on `self.port` after a short pause;
    /// panics with every reason when no server of ours came up.
    fn launch(&mut self, tries: usize, new_port: bool) {
        let mut failures = Vec::new();
        while failures.len() < tries {
            if new_port {
                let ports = &self.ports;
                self.port = ports.start + (getrandom::u32().unwrap() % ports.len() as u32) as u16;
                let bus = (self.ports == CLUSTER_PORTS).then(|| self.port + 10000);
                if !self.claim([Some(self.port), bus].into_iter().flatten()) {
                    failures.push(format!("port {}: claimed", self.port));
                    continue;
                }
                let taken = |port: u16| TcpListener::bind(("127.0.0.1", port)).is_err();
                if taken(self.port) || bus.is_some_and(taken) {
                    failures.push(format!("port {}: in use", self.port));
                    continue;
                }
            } else if !failures.is_empty() {
                std::thread::sleep(Duration::from_millis(100));
            }
            match self.spawn() {
                Ok(()) => return,
                Err(why) => failures.push(format!("port {}: {why}", self.port)),
            }
        }
        panic!("no redis-server of ours came up in {tries} tries: {failures:#?}");
    }

    /// Claims every one of `ports` ([`ports::claim`]) in place of the
    /// claims held so far; false (and nothing held) when one is taken.
    fn claim(&mut self, ports: impl Iterator<Item = u16>) -> bool {
        self.claims.clear();
        for port in ports {
            match ports::claim(port) {
                ports::Claim::Held(file) => self.claims.push(file),
                ports::Claim::Taken => {
                    self.claims.clear();
                    return false;
                }
                ports::Claim::Unavailable => {}
            }
        }
        true
    }

    /// Starts redis-server on `self.port` and waits until it is ready; on
    /// failure the child is killed and the reason returned.
    fn spawn(&mut self) -> Result<(), String> {
        let port = self.port.to_string();
        let file = |name: &str| self.dir.join(name).to_str().unwrap().to_owned();
        let listen = if self.tls {
            vec![
                "--port".to_owned(),
                "0".to_owned(),
                "--tls-port".to_owned(),
                port,
                "--tls-cert-file".to_owned(),
                file("server.crt"),
                "--tls-key-file".to_owned(),
                file("server.key"),
                "--tls-ca-cert-file".to_owned(),
                file("ca.crt"),
                "--tls-auth-clients".to_owned(),
                "no".to_owned(),
            ]
        } else {
            vec!["--port".to_owned(), port]
        };
        let mut command = Command::new("redis-server");
        match &self.sentinel_conf {
            Some(conf) => command.arg(conf).arg("--sentinel"),
            None => command.args(["--save", "", "--appendonly", "no"]),
        };
        let mut child = command
            .args(&listen)
            .args(["--bind", "127.0.0.1"])
            .args(["--dir", self.dir.to_str().unwrap()])
            .args(&self.extra)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("redis-server must be installed (apt-get install redis-server)");
        let ready = self.wait_ready(&mut child);
        if ready.is_ok() {
            self.child = Some(child);
        } else {
            let _ = child.kill();
            let _ = child.wait();
        }
        ready
    }

    /// Ready: `INFO server` on our port reports `child`'s pid and the
    /// `--unixsocket` file, if any, exists. Fails at once when the child
    /// exited or another server answers; otherwise after [`READY_TIMEOUT`].
    fn wait_ready(&self, child: &mut Child) -> Result<(), String> {
        let socket = self.option("--unixsocket").map(PathBuf::from);
        let password = self.option("--requirepass");
        let deadline = Instant::now() + READY_TIMEOUT;
        loop {
            if let Some(status) = child.try_wait().unwrap() {
                return Err(format!("redis-server exited ({status}): port taken?"));
            }
            match server_pid(self.port, self.tls, password) {
                Some(pid) if pid != child.id() => {
                    return Err(format!("another redis-server (pid {pid}) answers there"));
                }
                Some(_) if socket.as_ref().is_none_or(|s| s.exists()) => return Ok(()),
                _ => {}
            }
            if Instant::now() >= deadline {
                return Err(format!("not ready within {READY_TIMEOUT:?}"));
            }
            std::thread::sleep(Duration::from_millis(5));
        }
    }

    /// The value following `name` in the extra arguments.
    fn option(&self, name: &str) -> Option<&str> {
        let at = self.extra.iter().position(|a| a == name)?;
        self.extra.get(at + 1).map(String::as_str)
    }

    /// `redis://127.0.0.1:PORT`.
    pub fn url(&self) -> String {
        format!("redis://127.0.0.1:{}", self.port)
    }

    /// True until the server is killed.
    pub fn is_running(&self) -> bool {
        self.child.is_some()
    }

    /// The server's pid.
    pub fn pid(&self) -> u32 {
        self.child.as_ref().expect("server is running").id()
    }

    /// A plain client connection for assertions (authenticates with `auth`
    /// when given).
    pub fn client(&self) -> redis::Connection {
        redis::Client::open(self.url())
            .unwrap()
            .get_connection()
            .unwrap()
    }

    /// Sends one command on a fresh direct connection.
    pub fn cmd<T: redis::FromRedisValue>(&self, args: &[&str]) -> T {
        let mut c = redis::cmd(args[0]);
        for a in &args[1..] {
            c.arg(*a);
        }
        c.query(&mut self.client()).unwrap()
    }

    /// Calls of `command` in `INFO commandstats` (e.g. "set", "evalsha").
    pub fn calls(&self, command: &str) -> u64 {
        let info: String = self.cmd(&["INFO", "commandstats"]);
        let prefix = format!("cmdstat_{command}:calls=");
        info.lines()
            .find_map(|l| l.strip_prefix(&prefix))
            .map(|rest| rest.split(',').next().unwrap().parse().unwrap())
            .unwrap_or(0)
    }

    /// Kills the server with SIGKILL and waits for it.
    pub fn kill(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }

    /// Kills and starts the server again on the same port (data is lost),
    /// retrying a few times while the port is momentarily busy.
    pub fn restart(&mut self) {
        self.kill();
        self.launch(RESTART_TRIES, false);
    }

    /// Freezes the server (SIGSTOP): connections stay open, nothing answers.
    pub fn pause(&self) {
        signal(self.pid(), "STOP");
    }

    /// Unfreezes a paused server (SIGCONT).
    pub fn resume(&self) {
        signal(self.pid(), "CONT");
    }
}

impl Drop for RedisServer {
    fn drop(&mut self) {
        if let Some(child) = &self.child {
            signal(child.id(), "CONT");
        }
        self.kill();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// Copies the CA and server certificate files from `from` into `to`.
fn copy_certificates(from: &std::path::Path, to: &std::path::Path) {
    for name in ["ca.crt", "server.crt", "server.key"] {
        std::fs::copy(from.join(name), to.join(name)).unwrap();
    }
}

/// Runs `openssl args` in `dir`; panics with its stderr when it fails.
pub fn openssl(dir: &std::path::Path, args: &[&str]) {
    let out = Command::new("openssl")
        .args(args)
        .current_dir(dir)
        .output()
        .expect("openssl must be installed");
    assert!(
        out.status.success(),
        "openssl {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Writes ca.crt/ca.key and server.crt/server.key (CN and SAN 127.0.0.1,
/// localhost) into `dir` with the openssl command.
pub fn make_certificates(dir: &std::path::Path) {
    let run = |args: &[&str]| openssl(dir, args);
    run(&[
        "req",
        "-x509",
        "-newkey",
        "rsa:2048",
        "-nodes",
        "-days",
        "2",
        "-subj",
        "/CN=redislock-test-ca",
        "-keyout",
        "ca.key",
        "-out",
        "ca.crt",
    ]);
    run(&[
        "req",
        "-newkey",
        "rsa:2048",
        "-nodes",
        "-subj",
        "/CN=localhost",
        "-keyout",
        "server.key",
        "-out",
        "server.csr",
    ]);
    std::fs::write(
        dir.join("san.ext"),
        "subjectAltName=IP:127.0.0.1,DNS:localhost\n",
    )
    .unwrap();
    run(&[
        "x509",
        "-req",
        "-in",
        "server.csr",
        "-CA",
        "ca.crt",
        "-CAkey",
        "ca.key",
        "-CAcreateserial",
        "-days",
        "2",
        "-extfile",
        "san.ext",
        "-out",
        "server.crt",
    ]);
}

fn signal(pid: u32, sig: &str) {
    // Never pid 0 (our own process group) or 1, whatever was read.
    assert!(
        pid > 1 && pid != std::process::id(),
        "refusing to signal pid {pid}"
    );
    let status = Command::new("kill")
        .args([&format!("-{sig}"), &pid.to_string()])
        .status()
        .unwrap();
    assert!(status.success(), "kill -{sig} {pid} failed");
}

/// The `process_id` of `INFO server` on 127.0.0.1:`port` (over TLS without
/// verification when `tls`; after AUTH when `password`), or None when
/// nothing answers it yet.
fn server_pid(port: u16, tls: bool, password: Option<&str>) -> Option<u32> {
    let timeout = Duration::from_millis(500);
    let tcp = TcpStream::connect_timeout(&([127, 0, 0, 1], port).into(), timeout).ok()?;
    tcp.set_read_timeout(Some(timeout)).ok()?;
    tcp.set_write_timeout(Some(timeout)).ok()?;
    let mut request = Vec::new();
    let mut command = |args: &[&str]| {
        request.extend(format!("*{}\r\n", args.len()).bytes());
        for a in args {
            request.extend(format!("${}\r\n{a}\r\n", a.len()).bytes());
        }
    };
    if let Some(password) = password {
        command(&["AUTH", password]);
    }
    command(&["INFO", "server"]);
    command(&["QUIT"]);
    let reply = if tls {
        let connector = native_tls::TlsConnector::builder()
            .danger_accept_invalid_certs(true)
            .build()
            .ok()?;
        exchange(connector.connect("localhost", tcp).ok()?, &request)
    } else {
        exchange(tcp, &request)
    };
    let reply = String::from_utf8_lossy(&reply);
    let line = reply.lines().find_map(|l| l.strip_prefix("process_id:"))?;
    line.trim().parse().ok()
}

/// Sends `request`, then reads until the server closes (QUIT), a timeout
/// or an error.
fn exchange(mut stream: impl Read + Write, request: &[u8]) -> Vec<u8> {
    let mut reply = Vec::new();
    if stream.write_all(request).is_ok() {
        let mut chunk = [0; 4096];
        while let Ok(n @ 1..) = stream.read(&mut chunk) {
            reply.extend_from_slice(&chunk[..n]);
        }
    }
    reply
}

/// A new, empty directory `redislock-<name>-<pid>-<random>` under the temp
/// dir. The random part matters: pids wrap quickly (pid_max is 32768 on the
/// test machines, a few minutes of test runs), and a directory that a
/// killed test left under a pid-only name was picked up by the next process
/// with that pid (a cluster node loaded the old `nodes.conf` and refused to
/// join: "Node ... is not empty").
pub fn fresh_dir(name: &str) -> std::path::PathBuf {
    loop {
        let dir = std::env::temp_dir().join(format!(
            "redislock-{name}-{}-{:08x}",
            std::process::id(),
            getrandom::u32().unwrap()
        ));
        match std::fs::create_dir(&dir) {
            Ok(()) => return dir,
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
            Err(e) => panic!("cannot create {}: {e}", dir.display()),
        }
    }
}

/// A unique key per call, so tests never share state.
pub fn unique_key(name: &str) -> Vec<u8> {
    use std::sync::atomic::{AtomicU32, Ordering};
    static N: AtomicU32 = AtomicU32::new(0);
    format!(
        "test:{name}:{}:{}",
        std::process::id(),
        N.fetch_add(1, Ordering::Relaxed)
    )
    .into_bytes()
}

/// A lock on `server` with default options.
pub fn lock(server: &RedisServer, key: &[u8], ttl: f64) -> Lock {
    Lock::new(key.to_vec(), ttl, &[server.url()], LockOptions::default()).unwrap()
}

/// Releases `key` held by `token` with the real release script, as that
/// holder's first try (what its `release()` sends to one server). True
/// when `token` held it.
pub fn release_as(server: &RedisServer, key: &[u8], token: &[u8], successor: Successor) -> bool {
    // A key with a hash tag is a Cluster lock: its counter needs that slot.
    let cluster = keys::hash_tag(key) != key;
    let counter = keys::fence_counter(b"", key, cluster).unwrap();
    let keys = LockKeys::new(key.to_vec(), counter);
    commands::release(&keys, token, successor, false, Attempt::First)
        .query(&mut server.client())
        .unwrap()
        == Released::Yes
}

/// Polls `cond` every 5 ms until it holds or `within` has passed; whether
/// it held. The one poll loop of the tests.
pub fn poll_until(within: Duration, mut cond: impl FnMut() -> bool) -> bool {
    let deadline = Instant::now() + within;
    while !cond() {
        if Instant::now() >= deadline {
            return false;
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    true
}

/// [`poll_until`], or a panic that names `what` when it never held.
pub fn wait_until(what: &str, within: Duration, cond: impl FnMut() -> bool) {
    assert!(
        poll_until(within, cond),
        "timed out after {within:?} waiting until {what}"
    );
}

/// Never stop waiting early.
pub fn never() -> bool {
    false
}

/// Forks `forks` children, one every few milliseconds, while this process's
/// renewal thread renews a hold on `urls` (ttl 0.3 s: a renewal every
/// 100 ms, which asks a Sentinel for its master or a Cluster for its map
/// when its cache is stale). Each child builds a lock of its own on the
/// same servers, takes and releases it, and exits; a child that has not
/// exited 10 s later is hung (a lock the renewal thread held at fork time,
/// never released in the child) and is killed. Returns how many hung.
pub fn forks_hung_while_renewing(urls: &[String], options: &LockOptions, forks: usize) -> usize {
    let mut renewed = options.clone();
    renewed
        .set("auto_renew", redislock_core::OptionValue::Bool(true))
        .unwrap();
    let mut held = Lock::new(unique_key("fork-renewed"), 0.3, urls, renewed).unwrap();
    assert!(held.acquire(Duration::ZERO, &never).unwrap());
    let mut children = Vec::new();
    for i in 0..forks {
        let key = unique_key(&format!("fork-child-{i}"));
        // SAFETY: the child only runs the lock code (fork-safe by design:
        // per-process state) and leaves with _exit, running no destructor.
        let pid = unsafe { libc::fork() };
        assert!(pid >= 0, "fork failed");
        if pid == 0 {
            let ok = Lock::new(key, 5.0, urls, options.clone())
                .and_then(|mut l| Ok(l.acquire(Duration::ZERO, &never)? && l.release()?))
                .unwrap_or(false);
            unsafe { libc::_exit(if ok { 0 } else { 1 }) };
        }
        children.push(pid);
        std::thread::sleep(Duration::from_millis(5));
    }
    let deadline = Instant::now() + Duration::from_secs(10);
    let mut hung = 0;
    let mut failed = 0;
    for pid in children {
        let mut status = 0;
        loop {
            // SAFETY: waiting for our own child.
            let done = unsafe { libc::waitpid(pid, &mut status, libc::WNOHANG) };
            if done == pid {
                failed += usize::from(!(libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0));
                break;
            }
            if Instant::now() >= deadline {
                hung += 1;
                assert!(pid > 1);
                // SAFETY: our own child, read from fork() above.
                unsafe {
                    libc::kill(pid, libc::SIGKILL);
                    libc::waitpid(pid, &mut status, 0);
                }
                break;
            }
            std::thread::sleep(Duration::from_millis(2));
        }
    }
    assert!(
        held.is_acquired().unwrap(),
        "the parent's hold stayed renewed"
    );
    assert!(held.release().unwrap());
    assert_eq!(failed, 0, "children whose lock failed");
    hung
}

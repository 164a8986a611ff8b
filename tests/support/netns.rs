//! A cluster in network namespaces (issue 42): PostgreSQL, `nats-server`
//! and each `rookery-server` node in a namespace of its own, joined by
//! veth pairs to a bridge that the test process (the clients) reaches from
//! the root namespace. Faults are made inside the namespaces only: packet
//! filters (`iptables` in a node's namespace, a share of packets dropped
//! by its statistic match), a link taken down, and signals to a node's
//! process; latency comes from a relay in the test process
//! ([`DelayRelay`]: this machine's kernel has no `netem`). Nothing of the
//! host's own interfaces or rules is touched except one `FORWARD` rule
//! accepting the lab's bridge, added and removed by the lab.
//!
//! Needs root and `ip netns` (the test machines and CI run as root):
//! [`Lab::unavailable`] says why not otherwise. Every name carries a
//! per-run id; everything is removed when the [`Lab`] drops (a panic
//! included) and, should the test process be killed, by a watchdog shell
//! that sees its pipe close.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::time::{Duration, Instant};

use super::cluster::{command_as_service_user, pg_bin, running_as_root, Watched};

/// A network lab: a bridge and the namespaces on it.
pub struct Lab {
    id: String,
    bridge: String,
    /// The lab's /24, as `a.b.c` (the bridge is `.1`).
    prefix: String,
    members: Vec<String>,
    /// Removes everything if this process dies without dropping the lab.
    watchdog: Option<(Child, ChildStdin)>,
    pub dir: tempfile::TempDir,
}

fn run(argv: &[&str]) -> Result<String, String> {
    let output = Command::new(argv[0])
        .args(&argv[1..])
        .output()
        .map_err(|err| format!("{argv:?}: {err}"))?;
    if output.status.success() {
        Ok(String::from_utf8_lossy(&output.stdout).into_owned())
    } else {
        Err(format!(
            "{argv:?}: {}",
            String::from_utf8_lossy(&output.stderr).trim()
        ))
    }
}

fn must(argv: &[&str]) -> String {
    run(argv).unwrap_or_else(|err| panic!("{err}"))
}

impl Lab {
    /// Why a lab cannot be made here (not root, no `ip netns`), if so.
    pub fn unavailable() -> Option<String> {
        if !running_as_root() {
            return Some("not root: network namespaces need root".into());
        }
        let probe = format!("rkprobe{}", std::process::id() % 100_000);
        if let Err(err) = run(&["ip", "netns", "add", &probe]) {
            return Some(format!("`ip netns` is unavailable: {err}"));
        }
        let _ = run(&["ip", "netns", "del", &probe]);
        for tool in ["iptables", "tc", "nats-server", "setpriv"] {
            if run(&["sh", "-c", &format!("command -v {tool}")]).is_err() {
                return Some(format!("{tool} is not installed"));
            }
        }
        None
    }

    /// A lab with one namespace per name in `members`.
    pub fn new(members: &[&str]) -> Lab {
        let seed = std::process::id()
            ^ std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |elapsed| elapsed.subsec_nanos());
        let routes = must(&["ip", "-4", "route"]);
        let (id, prefix) = (0u32..64)
            .map(|step| seed.wrapping_add(step.wrapping_mul(7919)))
            .map(|n| {
                (
                    format!("{:04x}", n & 0xffff),
                    format!("10.{}.{}", 200 + (n >> 8) % 50, n % 250),
                )
            })
            .find(|(id, prefix)| {
                !routes.contains(&format!("{prefix}."))
                    && run(&["ip", "link", "show", &format!("rkb{id}")]).is_err()
            })
            .expect("a free subnet for the lab");
        let bridge = format!("rkb{id}");
        let namespaces: Vec<String> = members
            .iter()
            .map(|member| format!("rk{id}{member}"))
            .collect();
        // The watchdog first: whatever happens next is cleaned up.
        let mut cleanup = format!(
            "iptables -D FORWARD -i {bridge} -o {bridge} -j ACCEPT 2>/dev/null; \
             ip link del {bridge} 2>/dev/null;"
        );
        for (index, namespace) in namespaces.iter().enumerate() {
            cleanup.push_str(&format!(
                " ip netns pids {namespace} 2>/dev/null | xargs -r kill -9; \
                 ip netns del {namespace} 2>/dev/null; ip link del rk{id}v{index} 2>/dev/null;"
            ));
        }
        let mut child = Command::new("sh")
            .arg("-c")
            .arg(format!("read _ignored; {cleanup}"))
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("the lab's watchdog");
        let stdin = child.stdin.take().expect("the watchdog's stdin");
        let lab = Lab {
            id: id.clone(),
            bridge: bridge.clone(),
            prefix: prefix.clone(),
            members: members.iter().map(|m| m.to_string()).collect(),
            watchdog: Some((child, stdin)),
            dir: tempfile::Builder::new()
                .prefix("rookery-lab-")
                .tempdir()
                .expect("temporary directory"),
        };
        must(&["ip", "link", "add", &bridge, "type", "bridge"]);
        must(&[
            "ip",
            "addr",
            "add",
            &format!("{prefix}.1/24"),
            "dev",
            &bridge,
        ]);
        must(&["ip", "link", "set", &bridge, "up"]);
        // Bridged packets go through the host's FORWARD chain when
        // br_netfilter is loaded (Docker's policy there is DROP).
        must(&[
            "iptables", "-I", "FORWARD", "-i", &bridge, "-o", &bridge, "-j", "ACCEPT",
        ]);
        for (index, namespace) in namespaces.iter().enumerate() {
            let outside = format!("rk{id}v{index}");
            let inside = format!("rk{id}i{index}");
            must(&["ip", "netns", "add", namespace]);
            must(&[
                "ip", "link", "add", &outside, "type", "veth", "peer", "name", &inside,
            ]);
            must(&["ip", "link", "set", &outside, "master", &bridge, "up"]);
            must(&["ip", "link", "set", &inside, "netns", namespace]);
            lab.inside(index, &["ip", "link", "set", &inside, "name", "eth0"]);
            let address = format!("{}/24", lab.ip_of(index));
            lab.inside(index, &["ip", "addr", "add", &address, "dev", "eth0"]);
            lab.inside(index, &["ip", "link", "set", "eth0", "up"]);
            lab.inside(index, &["ip", "link", "set", "lo", "up"]);
        }
        eprintln!("lab {id}: bridge {bridge}, {prefix}.0/24, namespaces {namespaces:?}");
        lab
    }

    fn index(&self, member: &str) -> usize {
        self.members
            .iter()
            .position(|m| m == member)
            .unwrap_or_else(|| panic!("no member {member} in the lab"))
    }

    fn ip_of(&self, index: usize) -> String {
        format!("{}.{}", self.prefix, 10 + index)
    }

    /// The address of `member` on the bridge.
    pub fn ip(&self, member: &str) -> String {
        self.ip_of(self.index(member))
    }

    /// The namespace of `member`.
    pub fn namespace(&self, member: &str) -> String {
        format!("rk{}{member}", self.id)
    }

    /// The command prefix that runs a program in `member`'s namespace.
    pub fn exec_prefix(&self, member: &str) -> Vec<String> {
        vec![
            "ip".into(),
            "netns".into(),
            "exec".into(),
            self.namespace(member),
        ]
    }

    fn inside(&self, index: usize, argv: &[&str]) -> String {
        let namespace = format!("rk{}{}", self.id, self.members[index]);
        let mut full = vec!["ip", "netns", "exec", &namespace];
        full.extend_from_slice(argv);
        must(&full)
    }

    /// Runs `argv` in `member`'s namespace (it must succeed).
    pub fn sh(&self, member: &str, argv: &[&str]) -> String {
        self.inside(self.index(member), argv)
    }

    // ------------------------------------------------------------ faults

    /// Drops every packet between `member` and each of `peers` (both ways,
    /// inside `member`'s namespace: the peers' own links are untouched).
    pub fn cut(&self, member: &str, peers: &[&str]) {
        for peer in peers {
            let ip = self.ip(peer);
            self.sh(
                member,
                &["iptables", "-I", "INPUT", "-s", &ip, "-j", "DROP"],
            );
            self.sh(
                member,
                &["iptables", "-I", "OUTPUT", "-d", &ip, "-j", "DROP"],
            );
        }
    }

    /// Removes every filter of `member`'s namespace.
    pub fn mend(&self, member: &str) {
        self.sh(member, &["iptables", "-F", "INPUT"]);
        self.sh(member, &["iptables", "-F", "OUTPUT"]);
    }

    /// Takes `member`'s link down (cut from everything, the clients too)
    /// or up again.
    pub fn link(&self, member: &str, up: bool) {
        let state = if up { "up" } else { "down" };
        self.sh(member, &["ip", "link", "set", "eth0", state]);
    }

    /// Drops a share (`probability`, 0 to 1) of what `member` sends
    /// (`iptables`' statistic match: this kernel has no `netem`).
    pub fn lossy(&self, member: &str, probability: f64) {
        let probability = format!("{probability}");
        self.sh(
            member,
            &[
                "iptables",
                "-I",
                "OUTPUT",
                "-m",
                "statistic",
                "--mode",
                "random",
                "--probability",
                &probability,
                "-j",
                "DROP",
            ],
        );
    }

    /// Drops every packet between `member` and port `port` of the root
    /// namespace's address on the bridge (a [`DelayRelay`]).
    pub fn cut_from_relay(&self, member: &str, port: u16) {
        let ip = format!("{}.1", self.prefix);
        let port = port.to_string();
        self.sh(
            member,
            &[
                "iptables", "-I", "INPUT", "-s", &ip, "-p", "tcp", "--sport", &port, "-j", "DROP",
            ],
        );
        self.sh(
            member,
            &[
                "iptables", "-I", "OUTPUT", "-d", &ip, "-p", "tcp", "--dport", &port, "-j", "DROP",
            ],
        );
    }

    /// The root namespace's address on the bridge.
    pub fn host_ip(&self) -> String {
        format!("{}.1", self.prefix)
    }

    // ---------------------------------------------------------- services

    /// PostgreSQL in `member`'s namespace, on its address, port 5432.
    pub fn postgres(&self, member: &str) -> LabPostgres {
        let dir = self.dir.path().join(format!("pg-{member}"));
        std::fs::create_dir_all(&dir).expect("PostgreSQL's directory");
        must(&[
            "chown",
            "-R",
            "postgres:postgres",
            &dir.display().to_string(),
        ]);
        let data = dir.join("data");
        let output = command_as_service_user(&pg_bin("initdb"))
            .arg("-D")
            .arg(&data)
            .args(["-U", "rookery", "-A", "trust", "-E", "UTF8", "--no-sync"])
            .output()
            .expect("run initdb");
        assert!(
            output.status.success(),
            "initdb: {}",
            String::from_utf8_lossy(&output.stderr)
        );
        let mut hba = std::fs::OpenOptions::new()
            .append(true)
            .open(data.join("pg_hba.conf"))
            .expect("pg_hba.conf");
        writeln!(hba, "host all all {}.0/24 trust", self.prefix).expect("pg_hba.conf");
        let ip = self.ip(member);
        let mut argv = self.exec_prefix(member);
        argv.extend([
            "setpriv".into(),
            "--reuid=postgres".into(),
            "--regid=postgres".into(),
            "--init-groups".into(),
            pg_bin("postgres").display().to_string(),
            "-D".into(),
            data.display().to_string(),
            "-p".into(),
            "5432".into(),
            "-k".into(),
            dir.display().to_string(),
            "-c".into(),
            format!("listen_addresses={ip}"),
            "-c".into(),
            "max_connections=300".into(),
            "-c".into(),
            "fsync=off".into(),
        ]);
        // The lab's directory goes with the lab: the watchdog removes a
        // scratch directory only.
        let scratch = dir.join("scratch");
        let log = dir.join("postgres.log");
        let server = Watched::start(&argv, &scratch, "INT", false, &log);
        wait_for(&ip, 5432, "PostgreSQL", &log);
        let postgres = LabPostgres { ip, server };
        let deadline = Instant::now() + Duration::from_secs(30);
        while postgres.psql("postgres", "SELECT 1").is_err() {
            assert!(Instant::now() < deadline, "PostgreSQL never took a login");
            std::thread::sleep(Duration::from_millis(100));
        }
        postgres
    }

    /// `nats-server` in `member`'s namespace, on its address, port 4222.
    pub fn nats(&self, member: &str) -> Watched {
        let ip = self.ip(member);
        let dir = self.dir.path().join(format!("nats-{member}"));
        std::fs::create_dir_all(&dir).expect("NATS's directory");
        let mut argv = self.exec_prefix(member);
        argv.extend([
            "nats-server".into(),
            "-a".into(),
            ip.clone(),
            "-p".into(),
            "4222".into(),
        ]);
        let log = dir.join("nats.log");
        let server = Watched::start(&argv, &dir.join("scratch"), "TERM", false, &log);
        wait_for(&ip, 4222, "nats-server", &log);
        server
    }
}

impl Drop for Lab {
    fn drop(&mut self) {
        // The watchdog removes it all when its pipe ends.
        if let Some((mut child, stdin)) = self.watchdog.take() {
            drop(stdin);
            let _ = child.wait();
        }
        eprintln!("lab {}: removed", self.id);
    }
}

/// Waits until `ip:port` accepts TCP connections.
fn wait_for(ip: &str, port: u16, what: &str, log: &Path) {
    let deadline = Instant::now() + Duration::from_secs(30);
    let address: std::net::SocketAddr = format!("{ip}:{port}").parse().expect("an address");
    while std::net::TcpStream::connect_timeout(&address, Duration::from_millis(500)).is_err() {
        if Instant::now() > deadline {
            let log = std::fs::read_to_string(log).unwrap_or_default();
            panic!("{what} did not start on {address}; its log:\n{log}");
        }
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// PostgreSQL in the lab (superuser `rookery`, trusted on the lab's net).
pub struct LabPostgres {
    pub ip: String,
    server: Watched,
}

impl LabPostgres {
    pub fn url(&self, database: &str) -> String {
        format!("postgres://rookery@{}:5432/{database}", self.ip)
    }

    pub fn psql(&self, database: &str, sql: &str) -> Result<String, String> {
        run(&[
            "psql",
            "-X",
            "-q",
            "-A",
            "-t",
            "-v",
            "ON_ERROR_STOP=1",
            "-h",
            &self.ip,
            "-p",
            "5432",
            "-U",
            "rookery",
            "-d",
            database,
            "-c",
            sql,
        ])
    }

    pub fn stop(mut self) {
        self.server.stop();
    }
}

/// A `rookery-server` node in a namespace of the lab, restartable on the
/// same address.
pub struct LabNode {
    pub name: String,
    pub base: String,
    argv: Vec<String>,
    envs: Vec<(String, String)>,
    log: PathBuf,
    child: Option<tokio::process::Child>,
    /// How many times the node started (its log files are numbered).
    starts: u32,
}

impl LabNode {
    /// `rookery-server` in `member`'s namespace on its address, port 8080,
    /// with `args` and `envs` besides the tests' usual environment.
    pub async fn start(lab: &Lab, member: &str, args: &[String], envs: &[(&str, &str)]) -> LabNode {
        let ip = lab.ip(member);
        let mut argv = lab.exec_prefix(member);
        argv.push(env!("CARGO_BIN_EXE_rookery-server").into());
        argv.extend(["--addr".into(), format!("{ip}:8080")]);
        argv.extend(args.iter().cloned());
        let mut node = LabNode {
            name: member.to_string(),
            base: format!("http://{ip}:8080"),
            argv,
            envs: envs
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
            log: lab.dir.path().join(format!("{member}.log")),
            child: None,
            starts: 0,
        };
        node.restart().await;
        node
    }

    /// Starts the node's process (again) and waits for it to listen.
    pub async fn restart(&mut self) {
        self.starts += 1;
        let log = std::fs::File::create(self.log_path()).expect("the node's log");
        let mut command = tokio::process::Command::new(&self.argv[0]);
        command
            .args(&self.argv[1..])
            .env("RUST_LOG", "warn,rookery_server::cluster=info")
            .env("NO_COLOR", "1")
            .env("ROOKERY_AI_MOVE_DELAY_MS", "0")
            .env("ROOKERY_RATE_LIMIT", "100000")
            .env("ROOKERY_RATE_BURST", "100000")
            .env("ROOKERY_WS_RATE_LIMIT", "100000")
            .env("ROOKERY_WS_RATE_BURST", "100000")
            .env("ROOKERY_MAX_CONNECTIONS_PER_IP", "10000")
            .env("ROOKERY_MAX_WAITING_GAMES_PER_CLIENT", "10000")
            .envs(self.envs.iter().map(|(k, v)| (k.as_str(), v.as_str())))
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(log)
            .kill_on_drop(true);
        let mut child = command.spawn().expect("start rookery-server");
        let base = super::listening_base(&mut child).await;
        assert_eq!(base, self.base, "the node listens where it was told");
        self.child = Some(child);
    }

    fn log_path(&self) -> PathBuf {
        self.log.with_extension(format!("{}.log", self.starts))
    }

    /// The node's name in the lease table, from its log (a new one at
    /// each start).
    pub fn cluster_name(&self) -> Option<String> {
        let log = std::fs::read_to_string(self.log_path()).ok()?;
        let line = log.lines().find(|line| line.contains("cluster member"))?;
        let start = line.find("node=")? + "node=".len();
        let name: String = line[start..]
            .chars()
            .take_while(char::is_ascii_hexdigit)
            .collect();
        (!name.is_empty()).then_some(name)
    }

    /// The node's names in the lease table, one per start so far.
    pub fn cluster_names(&self) -> Vec<String> {
        self.log_lines("cluster member")
            .iter()
            .filter_map(|line| {
                let start = line.find("node=")? + "node=".len();
                let name: String = line[start..]
                    .chars()
                    .take_while(char::is_ascii_hexdigit)
                    .collect();
                (!name.is_empty()).then_some(name)
            })
            .collect()
    }

    /// Every log line of every start so far.
    pub fn log_lines(&self, needle: &str) -> Vec<String> {
        (1..=self.starts)
            .filter_map(|n| {
                std::fs::read_to_string(self.log.with_extension(format!("{n}.log"))).ok()
            })
            .flat_map(|log| {
                log.lines()
                    .filter(|line| line.contains(needle))
                    .map(str::to_string)
                    .collect::<Vec<_>>()
            })
            .collect()
    }

    fn pid(&self) -> Option<i32> {
        self.child
            .as_ref()
            .and_then(|child| child.id())
            .and_then(|pid| i32::try_from(pid).ok())
    }

    /// Sends `signal` to the node's process.
    pub fn signal(&self, signal: i32) {
        if let Some(pid) = self.pid() {
            // SAFETY: kill(2) on our own child's pid.
            unsafe { libc::kill(pid, signal) };
        }
    }

    /// SIGKILL, and wait for the exit.
    pub async fn kill(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.start_kill();
            let _ = tokio::time::timeout(Duration::from_secs(20), child.wait()).await;
        }
    }
}

/// A TCP relay in the test process, on the bridge, that can delay
/// everything crossing it by a settable time (both ways, order kept): the
/// nodes reach PostgreSQL through it, so that the database's link can be
/// made slow (this kernel has no `netem`).
pub struct DelayRelay {
    pub port: u16,
    delay: tokio::sync::watch::Sender<Duration>,
}

impl DelayRelay {
    /// Relays `host_ip`:(a free port) to `target`.
    pub async fn start(host_ip: &str, target: String) -> DelayRelay {
        let listener = tokio::net::TcpListener::bind((host_ip, 0))
            .await
            .expect("bind the relay");
        let port = listener.local_addr().expect("the relay's address").port();
        let (delay, delays) = tokio::sync::watch::channel(Duration::ZERO);
        tokio::spawn(async move {
            while let Ok((inbound, _)) = listener.accept().await {
                let target = target.clone();
                let delays = delays.clone();
                tokio::spawn(async move {
                    let Ok(outbound) = tokio::net::TcpStream::connect(&target).await else {
                        return;
                    };
                    let _ = inbound.set_nodelay(true);
                    let _ = outbound.set_nodelay(true);
                    let (in_read, in_write) = inbound.into_split();
                    let (out_read, out_write) = outbound.into_split();
                    tokio::select! {
                        _ = delayed_copy(in_read, out_write, delays.clone()) => {}
                        _ = delayed_copy(out_read, in_write, delays) => {}
                    }
                });
            }
        });
        DelayRelay { port, delay }
    }

    /// Delays what crosses from now on by `delay`.
    pub fn set_delay(&self, delay: Duration) {
        self.delay.send_replace(delay);
    }
}

/// Copies `from` to `to`, each chunk sent `delay` after it was read.
async fn delayed_copy(
    mut from: tokio::net::tcp::OwnedReadHalf,
    mut to: tokio::net::tcp::OwnedWriteHalf,
    delays: tokio::sync::watch::Receiver<Duration>,
) {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let (chunks, mut queued) =
        tokio::sync::mpsc::unbounded_channel::<(tokio::time::Instant, Vec<u8>)>();
    let writer = async move {
        while let Some((due, chunk)) = queued.recv().await {
            tokio::time::sleep_until(due).await;
            if to.write_all(&chunk).await.is_err() {
                return;
            }
        }
    };
    let reader = async move {
        let mut buffer = vec![0u8; 16 * 1024];
        loop {
            match from.read(&mut buffer).await {
                Ok(0) | Err(_) => return,
                Ok(n) => {
                    let due = tokio::time::Instant::now() + *delays.borrow();
                    if chunks.send((due, buffer[..n].to_vec())).is_err() {
                        return;
                    }
                }
            }
        }
    };
    // The reader ending (the peer closed) still lets queued chunks out.
    tokio::join!(reader, writer);
}

//! Real services for the cluster tests (issue 13): a throwaway PostgreSQL
//! and a throwaway `nats-server`, each started from the Debian packages
//! (`postgresql`, `nats-server`; `scripts/test.sh` installs them) on a free
//! port, in a temporary directory, and stopped when dropped.
//!
//! Each service runs under a small shell watchdog that holds a pipe from
//! this process: when the test process ends in any way (a failed assertion,
//! SIGKILL), the pipe closes and the watchdog stops the service and removes
//! its directory. So no test run leaves a database server behind, even for
//! the one PostgreSQL a whole test binary shares ([`shared_postgres`]).
//!
//! PostgreSQL refuses to run as root: as root the cluster is created and
//! run as the `postgres` user the Debian package creates (`runuser`).

use std::io::Write;
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

/// Where Debian puts the server binaries (not on `PATH`).
const PG_BIN_DIRS: &[&str] = &[
    "/usr/lib/postgresql/17/bin",
    "/usr/lib/postgresql/16/bin",
    "/usr/lib/postgresql/15/bin",
];

/// A port nobody listens on right now (the service binds it a moment later).
pub fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|listener| listener.local_addr())
        .expect("a free port")
        .port()
}

pub fn running_as_root() -> bool {
    // SAFETY: geteuid has no preconditions.
    unsafe { libc::geteuid() == 0 }
}

/// `program args…`, as the `postgres` user when this process is root.
pub fn command_as_service_user(program: &Path) -> Command {
    if running_as_root() {
        let mut command = Command::new("runuser");
        command.args(["-u", "postgres", "--"]).arg(program);
        command
    } else {
        Command::new(program)
    }
}

/// A process under a watchdog: killing the watchdog's stdin (dropping this,
/// or this process dying) stops the process with `signal` and removes `dir`.
pub struct Watched {
    watchdog: Child,
    stdin: Option<ChildStdin>,
}

impl Watched {
    /// Starts `argv` (as the `postgres` user if `as_service_user`).
    pub fn start(
        argv: &[String],
        dir: &Path,
        signal: &str,
        as_service_user: bool,
        log: &Path,
    ) -> Watched {
        // $1: signal, $2: directory to remove, $3: log, then the command.
        let script = r#"sig=$1; dir=$2; log=$3; shift 3
"$@" >"$log" 2>&1 &
pid=$!
trap 'kill -'"$sig"' $pid 2>/dev/null; wait $pid; rm -rf "$dir"; exit 0' TERM
read _ignored
kill -"$sig" $pid 2>/dev/null
wait $pid
rm -rf "$dir""#;
        let mut command = if as_service_user {
            command_as_service_user(Path::new("/bin/sh"))
        } else {
            Command::new("/bin/sh")
        };
        command
            .arg("-c")
            .arg(script)
            .arg("watchdog")
            .arg(signal)
            .arg(dir)
            .arg(log)
            .args(argv)
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::null());
        let mut watchdog = command.spawn().expect("start the service's watchdog");
        let stdin = watchdog.stdin.take();
        Watched { watchdog, stdin }
    }

    /// Stops the process and waits for the watchdog.
    pub fn stop(&mut self) {
        if let Some(mut stdin) = self.stdin.take() {
            let _ = stdin.write_all(b"stop\n");
        }
        let _ = self.watchdog.wait();
    }
}

impl Drop for Watched {
    fn drop(&mut self) {
        self.stop();
    }
}

/// Waits until something accepts TCP connections on `port`.
fn wait_for_port(port: u16, what: &str, log: &Path) {
    let deadline = Instant::now() + Duration::from_secs(30);
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
        if Instant::now() > deadline {
            let log = std::fs::read_to_string(log).unwrap_or_default();
            panic!("{what} did not start on port {port}; its log:\n{log}");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

// ------------------------------------------------------------- PostgreSQL

/// A throwaway PostgreSQL server (superuser `rookery`, trust
/// authentication, only on 127.0.0.1 and a socket in its directory).
pub struct Postgres {
    pub port: u16,
    dir: PathBuf,
    server: Watched,
    databases: AtomicU32,
}

pub fn pg_bin(name: &str) -> PathBuf {
    PG_BIN_DIRS
        .iter()
        .map(|dir| Path::new(dir).join(name))
        .find(|path| path.exists())
        .unwrap_or_else(|| {
            panic!("PostgreSQL's {name} not found in {PG_BIN_DIRS:?}: run scripts/test.sh or apt-get install postgresql")
        })
}

impl Postgres {
    /// initdb into a new temporary directory and start the server on a
    /// free port (blocking: about a second).
    pub fn start() -> Postgres {
        let dir = tempfile::Builder::new()
            .prefix("rookery-pg-")
            .tempdir()
            .expect("temporary directory")
            .keep();
        if running_as_root() {
            let status = Command::new("chown")
                .args(["-R", "postgres:postgres"])
                .arg(&dir)
                .status()
                .expect("chown");
            assert!(status.success(), "chown the PostgreSQL directory");
        }
        let data = dir.join("data");
        let output = command_as_service_user(&pg_bin("initdb"))
            .arg("-D")
            .arg(&data)
            .args(["-U", "rookery", "-A", "trust", "-E", "UTF8", "--no-sync"])
            .output()
            .expect("run initdb");
        assert!(
            output.status.success(),
            "initdb failed: {}",
            String::from_utf8_lossy(&output.stderr)
        );
        let port = free_port();
        let log = dir.join("postgres.log");
        let argv: Vec<String> = vec![
            pg_bin("postgres").display().to_string(),
            "-D".into(),
            data.display().to_string(),
            "-p".into(),
            port.to_string(),
            "-k".into(),
            dir.display().to_string(),
            "-c".into(),
            "listen_addresses=127.0.0.1".into(),
            // Several servers per test, each with a small pool.
            "-c".into(),
            "max_connections=400".into(),
        ];
        // SIGINT: PostgreSQL's fast shutdown.
        let server = Watched::start(&argv, &dir, "INT", true, &log);
        wait_for_port(port, "PostgreSQL", &log);
        let postgres = Postgres {
            port,
            dir,
            server,
            databases: AtomicU32::new(0),
        };
        // Accepting TCP is not yet accepting logins (recovery, start-up).
        let deadline = Instant::now() + Duration::from_secs(30);
        while !postgres.psql("postgres", "SELECT 1").status.success() {
            assert!(Instant::now() < deadline, "PostgreSQL never took a login");
            std::thread::sleep(Duration::from_millis(50));
        }
        postgres
    }

    /// The URL of database `name` on this server.
    pub fn url(&self, name: &str) -> String {
        format!("postgres://rookery@127.0.0.1:{}/{name}", self.port)
    }

    fn psql(&self, database: &str, sql: &str) -> std::process::Output {
        Command::new("psql")
            .args([
                "-X",
                "-q",
                "-A",
                "-t",
                "-v",
                "ON_ERROR_STOP=1",
                "-h",
                "127.0.0.1",
            ])
            .args([
                "-p",
                &self.port.to_string(),
                "-U",
                "rookery",
                "-d",
                database,
            ])
            .args(["-c", sql])
            .output()
            .expect("run psql")
    }

    /// Runs `sql` in `database` and returns its output, unaligned and
    /// without headers (for tests that read what is stored).
    pub fn query(&self, database: &str, sql: &str) -> String {
        let output = self.psql(database, sql);
        assert!(
            output.status.success(),
            "psql {sql:?}: {}",
            String::from_utf8_lossy(&output.stderr)
        );
        String::from_utf8_lossy(&output.stdout).trim().to_string()
    }

    /// Creates a new empty database and returns its name.
    pub fn create_database(&self) -> String {
        let n = self.databases.fetch_add(1, Ordering::Relaxed);
        let name = format!("rookery_test_{}_{n}", std::process::id());
        self.query("postgres", &format!("CREATE DATABASE {name}"));
        name
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Stops the server (fast shutdown) and removes its directory.
    pub fn stop(mut self) {
        self.server.stop();
    }
}

/// One PostgreSQL for the whole test binary, started on first use and
/// stopped when the binary exits (its watchdog sees the pipe close).
pub fn shared_postgres() -> &'static Postgres {
    static SHARED: OnceLock<Postgres> = OnceLock::new();
    SHARED.get_or_init(Postgres::start)
}

// ------------------------------------------------------------------ NATS

/// A throwaway `nats-server` on a free port. [`Nats::stop`] and
/// [`Nats::restart`] (same port) simulate a broker outage.
pub struct Nats {
    pub port: u16,
    dir: tempfile::TempDir,
    server: Option<Watched>,
}

impl Nats {
    pub fn start() -> Nats {
        let dir = tempfile::Builder::new()
            .prefix("rookery-nats-")
            .tempdir()
            .expect("temporary directory");
        let mut nats = Nats {
            port: free_port(),
            dir,
            server: None,
        };
        nats.restart();
        nats
    }

    pub fn url(&self) -> String {
        format!("nats://127.0.0.1:{}", self.port)
    }

    /// Starts the server again (after [`Nats::stop`]) on the same port.
    pub fn restart(&mut self) {
        let log = self.dir.path().join("nats.log");
        let argv: Vec<String> = vec![
            "nats-server".into(),
            "-a".into(),
            "127.0.0.1".into(),
            "-p".into(),
            self.port.to_string(),
        ];
        // The watchdog removes only a scratch directory of its own.
        let scratch = self.dir.path().join("scratch");
        let server = Watched::start(&argv, &scratch, "TERM", false, &log);
        wait_for_port(self.port, "nats-server", &log);
        self.server = Some(server);
    }

    /// Stops the server; clients see the connection drop.
    pub fn stop(&mut self) {
        if let Some(mut server) = self.server.take() {
            server.stop();
        }
    }
}

impl Drop for Nats {
    fn drop(&mut self) {
        self.stop();
    }
}

// ------------------------------------------------------- server processes

/// How long a wait for a server's log line may take (a level 8 search
/// tried twice on a loaded machine fits).
pub const SLOW: Duration = Duration::from_secs(60);

/// A spawned process and the lines of its log so far.
pub struct Proc {
    pub child: tokio::process::Child,
    log: Arc<Mutex<Vec<String>>>,
    name: String,
}

impl Proc {
    /// Starts `rookery-server` with `args` (fast AI pacing, no rate limits
    /// in the way), its log (stderr) echoed and kept.
    pub fn spawn(name: &str, args: &[&str]) -> Proc {
        let mut child = super::server_binary(args)
            .env("RUST_LOG", "info")
            .stderr(Stdio::piped())
            .spawn()
            .expect("start rookery-server");
        let stderr = child.stderr.take().expect("piped stderr");
        let log: Arc<Mutex<Vec<String>>> = Arc::default();
        let lines = log.clone();
        let label = name.to_string();
        tokio::spawn(async move {
            use tokio::io::AsyncBufReadExt;
            let mut reader = tokio::io::BufReader::new(stderr).lines();
            while let Ok(Some(line)) = reader.next_line().await {
                eprintln!("[{label}] {line}");
                lines.lock().unwrap().push(line);
            }
        });
        Proc {
            child,
            log,
            name: name.to_string(),
        }
    }

    /// The log lines so far that contain `needle`.
    pub fn lines(&self, needle: &str) -> Vec<String> {
        self.log
            .lock()
            .unwrap()
            .iter()
            .filter(|line| line.contains(needle))
            .cloned()
            .collect()
    }

    /// Waits (up to a minute) for a log line containing `needle`.
    pub async fn wait_line(&self, what: &str, needle: &str) -> String {
        super::within(SLOW, what, async {
            loop {
                if let Some(line) = self.lines(needle).into_iter().next() {
                    return line;
                }
                tokio::time::sleep(Duration::from_millis(10)).await;
            }
        })
        .await
    }

    /// SIGKILL, and wait for the exit.
    pub async fn kill(&mut self) {
        self.child.start_kill().expect("SIGKILL");
        let _ = super::within(super::WAIT, "the killed process to exit", self.child.wait()).await;
        eprintln!("[{}] killed", self.name);
    }
}

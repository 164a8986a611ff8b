//! Helpers for the black-box tests of the `rookery` binary: run it with
//! piped input in a temporary directory, with a deadline instead of the
//! chance to hang forever.
//!
//! The binary's configuration directory (where `rookery login` keeps its
//! token) is `.config` inside that temporary directory: a test never sees
//! nor touches the logins of the person running it.

#![allow(dead_code)]

// The server's tests make their throwaway CA with the same file.
#[path = "../../../tests/support/pki.rs"]
mod pki;

use std::io::{BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::mpsc;
use std::thread;
use std::time::{Duration, Instant};

/// The longest any one run or wait in these tests may take.
pub const WAIT: Duration = Duration::from_secs(60);

pub fn rookery() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_rookery"))
}

/// A finished run of the binary.
#[derive(Debug)]
pub struct Run {
    pub status: ExitStatus,
    pub stdout: String,
    pub stderr: String,
}

impl Run {
    /// Fails the test with the run's output unless it exited 0.
    pub fn assert_ok(&self) -> &Run {
        assert!(self.status.success(), "rookery failed: {self:#?}");
        self
    }
}

/// Runs `rookery ARGS` in `dir` with `input` on stdin until it exits.
pub fn run(dir: &Path, args: &[&str], input: &str) -> Run {
    finish(spawn_rookery(dir, args), input)
}

/// The configuration directory the binary is given when run in `dir`.
pub fn config_dir(dir: &Path) -> PathBuf {
    dir.join(".config")
}

/// Feeds `input`, collects the output, and waits (at most `WAIT`).
pub fn finish(mut child: Child, input: &str) -> Run {
    // A test that typed its input itself has taken stdin already.
    let stdin = child.stdin.take();
    let input = input.to_string();
    let writer = thread::spawn(move || {
        // The binary may exit before reading everything; that is its right.
        if let Some(mut stdin) = stdin {
            let _ = stdin.write_all(input.as_bytes());
        }
    });
    // A test may have taken stdout to follow it line by line.
    let stdout = child.stdout.take().map(collect);
    let stderr = child.stderr.take().map(collect);
    let status = wait_until(&mut child, WAIT);
    let _ = writer.join();
    let run = Run {
        status: status.unwrap_or_else(|| killed(&mut child)),
        stdout: stdout.map_or_else(String::new, |h| h.join().expect("stdout reader")),
        stderr: stderr.map_or_else(String::new, |h| h.join().expect("stderr reader")),
    };
    // The output (what the kill let the readers finish) tells where it hung.
    assert!(
        status.is_some(),
        "rookery did not exit within {WAIT:?}: {run:#?}"
    );
    run
}

fn collect(mut stream: impl Read + Send + 'static) -> thread::JoinHandle<String> {
    thread::spawn(move || {
        let mut text = String::new();
        let _ = stream.read_to_string(&mut text);
        text
    })
}

/// Waits for `child` for at most `limit`: its status, or None if it still
/// runs.
fn wait_until(child: &mut Child, limit: Duration) -> Option<ExitStatus> {
    let start = Instant::now();
    loop {
        if let Some(status) = child.try_wait().expect("wait") {
            return Some(status);
        }
        if start.elapsed() > limit {
            return None;
        }
        thread::sleep(Duration::from_millis(20));
    }
}

/// Kills `child` and returns the status of its death.
fn killed(child: &mut Child) -> ExitStatus {
    let _ = child.kill();
    child.wait().expect("wait for the killed run")
}

/// Lines of a child's stdout arriving on a channel, so a test can wait for
/// one with a deadline while the child runs.
pub struct LineFeed {
    rx: mpsc::Receiver<String>,
    pub seen: Vec<String>,
}

impl LineFeed {
    pub fn new(stream: impl Read + Send + 'static) -> LineFeed {
        let (tx, rx) = mpsc::channel();
        thread::spawn(move || {
            for line in BufReader::new(stream).lines() {
                let Ok(line) = line else { break };
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        LineFeed {
            rx,
            seen: Vec::new(),
        }
    }

    /// The first line (from now on) for which `pick` gives a value.
    pub fn wait_for<T>(&mut self, what: &str, pick: impl FnMut(&str) -> Option<T>) -> T {
        self.poll_for(pick)
            .unwrap_or_else(|| panic!("timed out waiting for {what}; saw {:#?}", self.seen))
    }

    /// The first line (from now on) for which `pick` gives a value, or
    /// None after `WAIT`.
    pub fn poll_for<T>(&mut self, mut pick: impl FnMut(&str) -> Option<T>) -> Option<T> {
        let deadline = Instant::now() + WAIT;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            let line = self.rx.recv_timeout(left).ok()?;
            let found = pick(&line);
            self.seen.push(line);
            if found.is_some() {
                return found;
            }
        }
    }

    /// Every line so far, without waiting.
    pub fn so_far(&mut self) -> Vec<String> {
        while let Ok(line) = self.rx.try_recv() {
            self.seen.push(line);
        }
        self.seen.clone()
    }

    /// Everything still to come, until the stream closes (or `WAIT`).
    pub fn rest(&mut self) -> Vec<String> {
        let deadline = Instant::now() + WAIT;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.rx.recv_timeout(left) {
                Ok(line) => self.seen.push(line),
                Err(mpsc::RecvTimeoutError::Disconnected) => return self.seen.clone(),
                Err(mpsc::RecvTimeoutError::Timeout) => {
                    panic!("output did not end; saw {:#?}", self.seen)
                }
            }
        }
    }
}

/// Reads a PGN file with the engine's own reader (always) and with
/// python-chess when it is installed; returns the SAN moves and the result.
pub fn check_pgn(path: &Path) -> (Vec<String>, String) {
    let text = std::fs::read_to_string(path).expect("read the PGN");
    let pgn = rookery_engine::read_pgn(&text).unwrap_or_else(|e| panic!("{e}: {text}"));
    let sans = pgn.game.san_moves().to_vec();
    let result = pgn.result().unwrap_or("*").to_string();
    if let Some(python_sans) = python_chess_sans(path) {
        assert_eq!(
            python_sans, sans,
            "python-chess reads other moves from {text}"
        );
    }
    (sans, result)
}

/// The SAN moves python-chess reads from a PGN file, or `None` (with a note)
/// when python-chess is not installed: it is an optional outside check.
fn python_chess_sans(path: &Path) -> Option<Vec<String>> {
    let script = "import sys, chess.pgn\n\
        game = chess.pgn.read_game(open(sys.argv[1]))\n\
        assert game is not None and not game.errors, game and game.errors\n\
        board = game.board()\n\
        for move in game.mainline_moves():\n    print(board.san(move)); board.push(move)\n";
    let probe = Command::new("python3")
        .args(["-c", "import chess.pgn"])
        .output();
    if !probe.is_ok_and(|o| o.status.success()) {
        eprintln!("note: python-chess not installed; PGN checked with the engine's reader only");
        return None;
    }
    let output = Command::new("python3")
        .args(["-c", script])
        .arg(path)
        .output()
        .expect("run python3");
    assert!(
        output.status.success(),
        "python-chess could not read {}: {}",
        path.display(),
        String::from_utf8_lossy(&output.stderr)
    );
    Some(
        String::from_utf8_lossy(&output.stdout)
            .lines()
            .map(str::to_string)
            .collect(),
    )
}

/// The server binary beside ours in the target directory.
fn server_binary() -> PathBuf {
    let ours = rookery();
    let dir = ours.parent().expect("the binary's directory");
    let server = dir.join(format!("rookery-server{}", std::env::consts::EXE_SUFFIX));
    assert!(
        server.exists(),
        "{} is missing: build it first with `cargo build -p rookery-server` \
         (cargo test --workspace does this)",
        server.display()
    );
    server
}

/// A running rookery-server, killed when dropped.
pub struct Server {
    child: Child,
    pub url: String,
    /// With TLS: the PEM file of the throwaway CA that signed the server's
    /// certificate, for `--ca-cert`.
    pub ca_cert: Option<PathBuf>,
    extra: Vec<String>,
    _dir: tempfile::TempDir,
}

impl Server {
    pub fn start() -> Server {
        let dir = tempfile::tempdir().expect("temporary directory");
        Server::start_in(dir, Vec::new(), None)
    }

    /// A server speaking HTTPS (and WSS) with a certificate for 127.0.0.1
    /// and localhost, signed by a CA made for this server alone.
    pub fn start_tls() -> Server {
        let dir = tempfile::tempdir().expect("temporary directory");
        let pki = dir.path().join("pki");
        std::fs::create_dir(&pki).expect("create the PKI directory");
        let pki = pki::make_pki(&pki);
        let extra = vec![
            "--tls-cert".to_string(),
            pki.cert.display().to_string(),
            "--tls-key".to_string(),
            pki.key.display().to_string(),
        ];
        let server = Server::start_in(dir, extra, Some(pki.ca));
        assert!(server.url.starts_with("https://"), "{}", server.url);
        server
    }

    fn start_in(dir: tempfile::TempDir, extra: Vec<String>, ca_cert: Option<PathBuf>) -> Server {
        let (child, url) = launch(&dir, "127.0.0.1:0", &extra);
        Server {
            child,
            url,
            ca_cert,
            extra,
            _dir: dir,
        }
    }

    /// Kills the server outright (no clean shutdown) and starts it again on
    /// the same address and database, as after a crash.
    pub fn crash_and_restart(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let addr = self
            .url
            .split_once("://")
            .map_or(self.url.as_str(), |(_, addr)| addr)
            .to_string();
        let (child, url) = launch(&self._dir, &addr, &self.extra);
        assert_eq!(url, self.url);
        self.child = child;
    }
}

/// Starts rookery-server on `addr` with its database in `dir`, plus
/// `extra` flags; returns it and its URL once it listens.
fn launch(dir: &tempfile::TempDir, addr: &str, extra: &[String]) -> (Child, String) {
    let mut child = Command::new(server_binary())
        .args(["--addr", addr, "--database"])
        .arg(dir.path().join("rookery.db"))
        .args(["--web-dir"])
        .arg(dir.path())
        .args(extra)
        .env("RUST_LOG", "warn")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("start rookery-server");
    let stdout = child.stdout.take().expect("stdout");
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let mut lines = BufReader::new(stdout).lines();
        if let Some(Ok(line)) = lines.next() {
            let _ = tx.send(line);
        }
        // Keep draining so the server never blocks on a full pipe.
        for _ in lines {}
    });
    let line = match rx.recv_timeout(WAIT) {
        Ok(line) => line,
        Err(_) => {
            let _ = child.kill();
            panic!("rookery-server did not start listening on {addr}");
        }
    };
    let url = line
        .strip_prefix("listening on ")
        .unwrap_or_else(|| panic!("unexpected first line {line:?}"))
        .to_string();
    (child, url)
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Starts `rookery ARGS` in `dir` with piped stdin, stdout and stderr.
pub fn spawn_rookery(dir: &std::path::Path, args: &[&str]) -> Child {
    Command::new(rookery())
        .args(args)
        .current_dir(dir)
        .env_remove("ROOKERY_SERVER")
        .env_remove("ROOKERY_PLAYER_TOKEN")
        .env_remove("ROOKERY_CA_CERT")
        .env("XDG_CONFIG_HOME", config_dir(dir))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start rookery")
}

/// A small HTTP client of the tests' own, for what the terminal client
/// does not do (signing up, reading a game's seats, checking a token),
/// trusting `server`'s CA when it speaks TLS.
pub struct Api {
    runtime: tokio::runtime::Runtime,
    http: reqwest::Client,
    pub url: String,
}

impl Api {
    pub fn new(server: &Server) -> Api {
        let mut http = reqwest::Client::builder().timeout(WAIT);
        if let Some(ca) = &server.ca_cert {
            let pem = std::fs::read(ca).expect("read the CA");
            http = http
                .tls_built_in_root_certs(false)
                .add_root_certificate(reqwest::Certificate::from_pem(&pem).expect("CA PEM"));
        }
        Api {
            runtime: tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .expect("runtime"),
            http: http.build().expect("HTTP client"),
            url: server.url.clone(),
        }
    }

    /// `METHOD PATH` with an optional Bearer token and JSON body: (status,
    /// JSON answer or null).
    pub fn call(
        &self,
        method: reqwest::Method,
        path: &str,
        token: Option<&str>,
        body: Option<serde_json::Value>,
    ) -> (u16, serde_json::Value) {
        self.runtime.block_on(async {
            let mut request = self.http.request(method, format!("{}{path}", self.url));
            if let Some(token) = token {
                request = request.bearer_auth(token);
            }
            if let Some(body) = body {
                request = request.json(&body);
            }
            let response = request.send().await.expect("request");
            let status = response.status().as_u16();
            let text = response.text().await.expect("body");
            (status, serde_json::from_str(&text).unwrap_or_default())
        })
    }

    /// Signs an account up (`POST /api/accounts`).
    pub fn sign_up(&self, name: &str, password: &str) {
        let (status, answer) = self.call(
            reqwest::Method::POST,
            "/api/accounts",
            None,
            Some(serde_json::json!({"name": name, "password": password})),
        );
        assert_eq!(status, 201, "sign up {name}: {answer}");
    }
}

//! SIGTERM at awkward moments: during start-up (before the `listening on`
//! line, and while games resume in the background) and with stalled clients:
//! one that stopped reading its NDJSON stream, one that never finishes
//! sending its request (which alone holds a graceful shutdown forever
//! without the grace period). Every time the process exits 0.

mod support;

use std::path::Path;
use std::process::Stdio;
use std::time::Duration;

use serde_json::{json, Value};
use support::*;
use tokio::io::AsyncWriteExt;
use tokio::process::{Child, Command};

struct Server {
    child: Child,
    base: String,
}

fn command(db: &Path, extra: &[&str]) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_rookery-server"));
    command
        .args(["--addr", "127.0.0.1:0", "--database"])
        .arg(db)
        .args(extra)
        .env("RUST_LOG", "error")
        .env("ROOKERY_AI_MOVE_DELAY_MS", "0")
        .env("ROOKERY_RATE_LIMIT", "10000")
        .env("ROOKERY_RATE_BURST", "10000")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .kill_on_drop(true);
    command
}

impl Server {
    async fn start(db: &Path, extra: &[&str]) -> Server {
        let mut child = command(db, extra).spawn().expect("start rookery-server");
        let base = listening_base(&mut child).await;
        Server { child, base }
    }
}

fn sigterm(child: &Child) {
    let pid = child.id().expect("running") as i32;
    // SAFETY: kill(2) on our own child's pid with a valid signal.
    assert_eq!(unsafe { libc::kill(pid, libc::SIGTERM) }, 0);
}

async fn exits_zero(mut child: Child, what: &str) {
    let status = within(WAIT, what, child.wait()).await.expect("wait");
    assert_eq!(status.code(), Some(0), "{what}: {status:?}");
}

async fn post(http: &reqwest::Client, url: String, token: Option<&str>, body: Value) -> Value {
    let mut request = http.post(url).json(&body);
    if let Some(token) = token {
        request = request.bearer_auth(token);
    }
    let (status, answer) = read(request.send().await.expect("POST")).await;
    assert!(status < 300, "{status} {answer}");
    answer
}

#[tokio::test]
async fn sigterm_during_start_up_exits_zero() {
    let db = TestDb::new();
    // Games to resume at the next start: timed and under way.
    let server = Server::start(&db.path(), &[]).await;
    let http = reqwest::Client::new();
    for _ in 0..60 {
        let created = post(
            &http,
            format!("{}/api/games", server.base),
            None,
            json!({"white": {"kind": "human"}, "black": {"kind": "human"},
                   "clock": {"initial": 600, "increment": 0}}),
        )
        .await;
        let id = created["game"]["id"].as_str().unwrap().to_string();
        let white = created["seat"]["token"].as_str().unwrap().to_string();
        post(
            &http,
            format!("{}/api/games/{id}/join", server.base),
            None,
            json!({}),
        )
        .await;
        post(
            &http,
            format!("{}/api/games/{id}/move", server.base),
            Some(&white),
            json!({"uci": "e2e4"}),
        )
        .await;
    }
    sigterm(&server.child);
    exits_zero(server.child, "the first server").await;

    // Right after the `listening on` line: the games are resuming.
    let server = Server::start(&db.path(), &[]).await;
    sigterm(&server.child);
    exits_zero(server.child, "SIGTERM while resuming").await;

    // Before the `listening on` line: the database is still opening.
    let child = command(&db.path(), &[]).spawn().expect("start");
    tokio::time::sleep(Duration::from_millis(30)).await;
    sigterm(&child);
    exits_zero(child, "SIGTERM during start-up").await;
}

#[tokio::test]
async fn sigterm_with_a_stalled_stream_reader_exits_zero() {
    let db = TestDb::new();
    let server = Server::start(&db.path(), &["--shutdown-grace-ms", "500"]).await;
    let http = reqwest::Client::new();
    // An AI v AI game writes state after state into the stream.
    let created = post(
        &http,
        format!("{}/api/games", server.base),
        None,
        json!({"white": {"kind": "ai", "level": 1}, "black": {"kind": "ai", "level": 1}}),
    )
    .await;
    let id = created["game"]["id"].as_str().unwrap().to_string();
    // A reader with a tiny receive buffer that never reads.
    let addr: std::net::SocketAddr = server.base.trim_start_matches("http://").parse().unwrap();
    let socket = tokio::net::TcpSocket::new_v4().unwrap();
    socket.set_recv_buffer_size(1024).unwrap();
    let mut stalled = socket.connect(addr).await.unwrap();
    stalled
        .write_all(format!("GET /api/games/{id}/stream HTTP/1.1\r\nHost: test\r\n\r\n").as_bytes())
        .await
        .unwrap();
    // Let the states pile up in the socket's buffers.
    within(WAIT, "the AI v AI game to play on", async {
        loop {
            let state: Value = http
                .get(format!("{}/api/games/{id}", server.base))
                .send()
                .await
                .unwrap()
                .json()
                .await
                .unwrap();
            if moves(&state).len() >= 60 || state["status"] == "finished" {
                break;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    })
    .await;
    // And a client that never finishes sending its request.
    let mut half_sent = tokio::net::TcpStream::connect(addr).await.unwrap();
    half_sent
        .write_all(b"GET /api/games HTTP/1.1\r\nHost: test\r\n")
        .await
        .unwrap();
    sigterm(&server.child);
    exits_zero(server.child, "SIGTERM with stalled clients").await;
    drop(stalled);
    drop(half_sent);
}

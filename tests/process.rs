//! The real `rookery-server` binary as a process: the `listening on` line,
//! graceful exit 0 on SIGTERM with streams and WebSockets open, and SIGKILL
//! in the middle of games followed by a restart with no acknowledged move
//! missing; and the `worker` subcommand's help and usage error.

mod support;

use std::path::Path;
use std::process::Stdio;
use std::sync::Arc;
use std::time::Duration;

use futures_util::StreamExt;
use serde_json::{json, Value};
use support::*;
use tokio::process::{Child, Command};
use tokio::sync::Mutex;

/// A running binary and the base URL it printed.
struct Process {
    child: Child,
    base: String,
    http: reqwest::Client,
}

impl Process {
    async fn start(db: &Path) -> Process {
        let mut command = Command::new(env!("CARGO_BIN_EXE_rookery-server"));
        command
            .args(["--addr", "127.0.0.1:0", "--database"])
            .arg(db);
        Process::spawn(command).await
    }

    /// Starts `command` (the binary with its flags or environment).
    async fn spawn(mut command: Command) -> Process {
        let mut child = command
            .env("RUST_LOG", "warn")
            .env("ROOKERY_AI_MOVE_DELAY_MS", "0")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .kill_on_drop(true)
            .spawn()
            .expect("start rookery-server");
        let base = listening_base(&mut child).await;
        assert!(base.starts_with("http://127.0.0.1:"), "{base}");
        let port: u16 = base.rsplit(':').next().unwrap().parse().expect("a port");
        assert_ne!(port, 0, "the real port, not 0");
        Process {
            child,
            base,
            http: reqwest::Client::new(),
        }
    }

    fn url(&self, path: &str) -> String {
        format!("{}{}", self.base, path)
    }

    async fn post(&self, path: &str, token: Option<&str>, body: Option<Value>) -> (u16, Value) {
        let mut request = self.http.post(self.url(path));
        if let Some(token) = token {
            request = request.bearer_auth(token);
        }
        if let Some(body) = body {
            request = request.json(&body);
        }
        read(request.send().await.expect("POST")).await
    }

    async fn state(&self, id: &str) -> Value {
        let response = self
            .http
            .get(self.url(&format!("/api/games/{id}")))
            .send()
            .await;
        let (status, state) = read(response.expect("GET")).await;
        assert_eq!(status, 200, "{state}");
        state
    }

    async fn human_game(&self) -> (String, String, String) {
        let (status, created) = self
            .post(
                "/api/games",
                None,
                Some(
                    json!({"white": {"kind": "human"}, "black": {"kind": "human"},
                            "clock": {"initial": 900, "increment": 0}}),
                ),
            )
            .await;
        assert_eq!(status, 201, "{created}");
        let id = created["game"]["id"].as_str().unwrap().to_string();
        let white = created["seat"]["token"].as_str().unwrap().to_string();
        let (status, joined) = self
            .post(&format!("/api/games/{id}/join"), None, None)
            .await;
        assert_eq!(status, 200, "{joined}");
        let black = joined["seat"]["token"].as_str().unwrap().to_string();
        (id, white, black)
    }

    fn signal(&self, signal: i32) {
        let pid = self.child.id().expect("a running child") as i32;
        // SAFETY: kill(2) on our own child's pid, with a valid signal number.
        let sent = unsafe { libc::kill(pid, signal) };
        assert_eq!(sent, 0, "kill({pid}, {signal})");
    }

    async fn wait_exit(mut self) -> std::process::ExitStatus {
        within(WAIT, "the server process to exit", self.child.wait())
            .await
            .expect("wait for the child")
    }
}

/// A game line without repetitions, long enough for the crash to hit it
/// in the middle.
const LINE: [&str; 20] = [
    "e2e4", "e7e5", "g1f3", "b8c6", "f1b5", "a7a6", "b5a4", "g8f6", "e1g1", "f8e7", "f1e1", "b7b5",
    "a4b3", "d7d6", "c2c3", "e8g8", "h2h3", "c6b8", "d2d4", "b8d7",
];

#[tokio::test]
async fn sigkill_then_restart_loses_no_acknowledged_move() {
    let db = TestDb::new();
    let server = Process::start(&db.path()).await;
    let mut games = Vec::new();
    for _ in 0..4 {
        games.push(server.human_game().await);
    }
    // Four players' loops move as fast as they can; each records the moves
    // the server acknowledged.
    let acknowledged: Arc<Mutex<Vec<Vec<String>>>> = Arc::new(Mutex::new(vec![Vec::new(); 4]));
    let base = server.base.clone();
    let mut loops = Vec::new();
    for (index, (id, white, black)) in games.iter().cloned().enumerate() {
        let acknowledged = acknowledged.clone();
        let base = base.clone();
        loops.push(tokio::spawn(async move {
            let http = reqwest::Client::new();
            for (ply, uci) in LINE.iter().enumerate() {
                let token = if ply % 2 == 0 { &white } else { &black };
                let sent = http
                    .post(format!("{base}/api/games/{id}/move"))
                    .bearer_auth(token)
                    .json(&json!({ "uci": uci }))
                    .send()
                    .await;
                match sent {
                    Ok(response) if response.status().as_u16() == 200 => {
                        // The body must arrive too: that is the acknowledgement.
                        if response.bytes().await.is_err() {
                            return;
                        }
                        acknowledged.lock().await[index].push(uci.to_string());
                    }
                    Ok(response) => panic!("move {uci}: {}", response.status()),
                    Err(_) => return,
                }
            }
        }));
    }
    // Kill it in the middle of the games.
    within(WAIT, "a few acknowledged moves", async {
        loop {
            let done: usize = acknowledged.lock().await.iter().map(Vec::len).sum();
            if done >= 12 {
                break;
            }
            tokio::time::sleep(Duration::from_millis(2)).await;
        }
    })
    .await;
    server.signal(libc::SIGKILL);
    let status = server.wait_exit().await;
    assert!(!status.success());
    for task in loops {
        within(WAIT, "the player loops", task)
            .await
            .expect("player loop");
    }
    let acknowledged = acknowledged.lock().await.clone();

    let server = Process::start(&db.path()).await;
    for ((id, white, black), acked) in games.iter().zip(&acknowledged) {
        let state = server.state(id).await;
        let stored = moves(&state);
        // Every acknowledged move is there; at most one more (committed but
        // not yet acknowledged when the process died).
        assert!(
            stored.starts_with(acked),
            "stored {stored:?}, acknowledged {acked:?}"
        );
        assert!(stored.len() <= acked.len() + 1, "{stored:?} vs {acked:?}");
        assert_eq!(stored, LINE[..stored.len()]);
        assert_eq!(state["status"], "active");
        // The game goes on with the same tokens.
        if stored.len() < LINE.len() {
            let token = if stored.len() % 2 == 0 { white } else { black };
            let (status, next) = server
                .post(
                    &format!("/api/games/{id}/move"),
                    Some(token),
                    Some(json!({"uci": LINE[stored.len()]})),
                )
                .await;
            assert_eq!(status, 200, "{next}");
        }
    }
    server.signal(libc::SIGTERM);
    assert_eq!(server.wait_exit().await.code(), Some(0));
}

#[tokio::test]
async fn sigterm_exits_zero_with_streams_sockets_and_searches_open() {
    let db = TestDb::new();
    let server = Process::start(&db.path()).await;
    let (id, white, _black) = server.human_game().await;
    let (status, ai_game) = server
        .post(
            "/api/games",
            None,
            Some(json!({"white": {"kind": "ai", "level": 8}, "black": {"kind": "ai", "level": 8}})),
        )
        .await;
    assert_eq!(status, 201);
    let ai_id = ai_game["game"]["id"].as_str().unwrap().to_string();

    // A WebSocket player, an NDJSON reader and an idle keep-alive client.
    let ws_url = format!(
        "{}/ws/games/{id}?token={white}",
        server.base.replace("http", "ws")
    );
    let (mut ws, _) = within(WAIT, "WebSocket", tokio_tungstenite::connect_async(ws_url))
        .await
        .expect("WebSocket");
    let first = within(WAIT, "first state", ws.next()).await;
    assert!(matches!(first, Some(Ok(_))));
    let stream = server
        .http
        .get(server.url(&format!("/api/games/{ai_id}/stream")))
        .send()
        .await
        .expect("stream");
    let mut lines = stream.bytes_stream();
    assert!(within(WAIT, "first NDJSON line", lines.next())
        .await
        .is_some());

    server.signal(libc::SIGTERM);
    let status = server.wait_exit().await;
    assert_eq!(status.code(), Some(0), "graceful exit");
    // Both long-lived connections were closed by the server.
    within(WAIT, "the stream to end", async {
        while let Some(Ok(_)) = lines.next().await {}
    })
    .await;
    within(WAIT, "the socket to close", async {
        while let Some(Ok(_)) = ws.next().await {}
    })
    .await;
}

#[tokio::test]
async fn sigint_exits_zero_too() {
    let db = TestDb::new();
    let server = Process::start(&db.path()).await;
    let (id, white, _black) = server.human_game().await;
    let (status, _) = server
        .post(
            &format!("/api/games/{id}/move"),
            Some(&white),
            Some(json!({"uci": "e2e4"})),
        )
        .await;
    assert_eq!(status, 200);
    server.signal(libc::SIGINT);
    assert_eq!(server.wait_exit().await.code(), Some(0));
    // The move is there after a restart.
    let server = Process::start(&db.path()).await;
    assert_eq!(moves(&server.state(&id).await), ["e2e4"]);
    server.signal(libc::SIGTERM);
    assert_eq!(server.wait_exit().await.code(), Some(0));
}

/// Configured by the environment alone (`ROOKERY_ADDR`, no `--database`):
/// the default database `sqlite://rookery.db` is created in the working
/// directory.
#[tokio::test]
async fn environment_and_the_default_database() {
    let dir = TestDb::new();
    let mut command = Command::new(env!("CARGO_BIN_EXE_rookery-server"));
    command
        .current_dir(dir.dir.path())
        .env("ROOKERY_ADDR", "127.0.0.1:0")
        .env_remove("DATABASE_URL");
    let server = Process::spawn(command).await;
    let (id, white, _black) = server.human_game().await;
    let (status, _) = server
        .post(
            &format!("/api/games/{id}/move"),
            Some(&white),
            Some(json!({"uci": "e2e4"})),
        )
        .await;
    assert_eq!(status, 200);
    assert!(dir.dir.path().join("rookery.db").exists());
    server.signal(libc::SIGTERM);
    assert_eq!(server.wait_exit().await.code(), Some(0));

    // DATABASE_URL in the environment names another file.
    let other = dir.dir.path().join("other.db");
    let mut command = Command::new(env!("CARGO_BIN_EXE_rookery-server"));
    command
        .current_dir(dir.dir.path())
        .env("ROOKERY_ADDR", "127.0.0.1:0")
        .env("DATABASE_URL", format!("sqlite://{}", other.display()));
    let server = Process::spawn(command).await;
    let (status, _) = server
        .post(
            "/api/games",
            None,
            Some(json!({"white": {"kind": "human"}, "black": {"kind": "human"}})),
        )
        .await;
    assert_eq!(status, 201);
    assert!(other.exists());
    server.signal(libc::SIGTERM);
    assert_eq!(server.wait_exit().await.code(), Some(0));
}

/// The AI worker as a subcommand, `rookery-server worker --nats URL`, has
/// its own help, and without `--nats` (nor `ROOKERY_NATS`) it stops at once
/// with a usage error (exit 2) that names the flag. `--role worker` and
/// `ROOKERY_ROLE=worker` keep their own error for a missing `--nats`.
#[tokio::test]
async fn the_worker_subcommand_and_its_missing_nats() {
    let run = |args: &[&str], role: Option<&str>| {
        let mut command = Command::new(env!("CARGO_BIN_EXE_rookery-server"));
        command
            .args(args)
            .env_remove("ROOKERY_NATS")
            .env_remove("ROOKERY_ROLE")
            .env("RUST_LOG", "warn")
            .stdin(Stdio::null())
            .kill_on_drop(true);
        if let Some(role) = role {
            command.env("ROOKERY_ROLE", role);
        }
        async move {
            let output = tokio::time::timeout(Duration::from_secs(30), command.output())
                .await
                .expect("the process exits at once")
                .expect("run rookery-server");
            let text = |bytes: Vec<u8>| String::from_utf8(bytes).expect("UTF-8");
            (
                output.status.code(),
                text(output.stdout),
                text(output.stderr),
            )
        }
    };

    let (code, help, _) = run(&["worker", "--help"], None).await;
    assert_eq!(code, Some(0), "{help}");
    assert!(help.contains("Usage: rookery-server worker"), "{help}");
    assert!(help.contains("--nats <URL>"), "{help}");
    assert!(help.contains("--ai-threads"), "{help}");
    assert!(help.contains("[env: ROOKERY_NATS="), "{help}");
    let (code, help, _) = run(&["--help"], None).await;
    assert_eq!(code, Some(0));
    assert!(help.contains("worker  Runs an AI worker"), "{help}");

    let (code, stdout, stderr) = run(&["worker"], None).await;
    assert_eq!(code, Some(2), "{stderr}");
    assert!(stdout.is_empty(), "no ready line: {stdout}");
    assert!(
        stderr.contains("the following required arguments were not provided")
            && stderr.contains("--nats <URL>"),
        "{stderr}"
    );

    for (args, role) in [(&["--role", "worker"][..], None), (&[][..], Some("worker"))] {
        let (code, stdout, stderr) = run(args, role).await;
        assert_eq!(code, Some(1), "{stderr}");
        assert!(stdout.is_empty(), "no ready line: {stdout}");
        assert!(
            stderr.contains("a worker needs --nats URL (or ROOKERY_NATS)"),
            "{stderr}"
        );
    }
}

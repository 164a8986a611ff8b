//! No secret in the logs: the real binary runs with `RUST_LOG=trace`, its
//! log captured in a file, while clients use every secret the service hands
//! out (player token, seat tokens, invite secret) in every place a client
//! sends one: Bearer headers, a join body, the WebSocket's `?token=`, a
//! WebSocket message. None of them, nor its hex encoding (frame dumps print
//! payloads as hex), may appear in the log.

mod support;

use std::process::Stdio;

use futures_util::{SinkExt, StreamExt};
use serde_json::{json, Value};
use support::*;
use tokio::process::Command;
use tokio_tungstenite::tungstenite::Message;

async fn post(
    http: &reqwest::Client,
    url: String,
    token: Option<&str>,
    body: Option<Value>,
) -> (u16, Value) {
    let mut request = http.post(url);
    if let Some(token) = token {
        request = request.bearer_auth(token);
    }
    if let Some(body) = body {
        request = request.json(&body);
    }
    read(request.send().await.expect("POST")).await
}

fn secret(answer: &Value, pointer: &str) -> String {
    answer
        .pointer(pointer)
        .and_then(Value::as_str)
        .unwrap_or_else(|| panic!("{pointer} in {answer}"))
        .to_string()
}

fn hex(text: &str) -> String {
    text.bytes().map(|b| format!("{b:02x}")).collect()
}

#[tokio::test]
async fn no_token_or_invite_reaches_the_log_at_trace_level() {
    secrets_stay_out_of("text").await;
}

/// The same with `--log-format json` (issue 25): every line is a JSON
/// object, and no secret is in any.
#[tokio::test]
async fn no_secret_reaches_the_json_log_either() {
    let log = secrets_stay_out_of("json").await;
    for line in log.lines().filter(|line| !line.trim().is_empty()) {
        let value: Value = serde_json::from_str(line)
            .unwrap_or_else(|err| panic!("not a JSON log line ({err}): {line}"));
        assert!(
            value["level"].is_string() && value["timestamp"].is_string(),
            "{line}"
        );
    }
}

/// Runs the real binary with the log in `format`, uses every secret, and
/// checks none is in the log; returns the log.
async fn secrets_stay_out_of(format: &str) -> String {
    let dir = tempfile::tempdir().expect("temporary directory");
    let log_path = dir.path().join("server.log");
    let log_file = std::fs::File::create(&log_path).expect("log file");
    let mut child = Command::new(env!("CARGO_BIN_EXE_rookery-server"))
        .args([
            "--log-format",
            format,
            "--addr",
            "127.0.0.1:0",
            "--database",
        ])
        .arg(dir.path().join("rookery.db"))
        .env("RUST_LOG", "trace")
        .env("ROOKERY_AI_MOVE_DELAY_MS", "0")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(log_file)
        .kill_on_drop(true)
        .spawn()
        .expect("start rookery-server");
    let base = listening_base(&mut child).await;
    let url = |path: &str| format!("{base}{path}");
    let http = reqwest::Client::new();

    let (status, player) = post(
        &http,
        url("/api/players"),
        None,
        Some(json!({"name": "alice"})),
    )
    .await;
    assert_eq!(status, 201, "{player}");
    let player_token = secret(&player, "/token");

    let (status, created) = post(
        &http,
        url("/api/games"),
        Some(&player_token),
        Some(
            json!({"white": {"kind": "human"}, "black": {"kind": "human"},
                    "visibility": "private"}),
        ),
    )
    .await;
    assert_eq!(status, 201, "{created}");
    let id = secret(&created, "/game/id");
    let white = secret(&created, "/seat/token");
    let invite = secret(&created, "/invite");

    // A wrong invite first (refused), then the right one.
    let join = url(&format!("/api/games/{id}/join"));
    let (status, _) = post(&http, join.clone(), None, Some(json!({"invite": white}))).await;
    assert_eq!(status, 403);
    let (status, joined) = post(&http, join, None, Some(json!({ "invite": invite }))).await;
    assert_eq!(status, 200, "{joined}");
    let black = secret(&joined, "/seat/token");

    // The seat token in the upgrade's query, a move, and a message carrying
    // a token (the shape of a token-in-first-message handshake).
    let ws_url = format!(
        "{}/ws/games/{id}?token={white}",
        base.replacen("http", "ws", 1)
    );
    let (mut socket, _) = within(
        WAIT,
        "WebSocket connect",
        tokio_tungstenite::connect_async(ws_url),
    )
    .await
    .expect("WebSocket connect");
    socket
        .send(Message::text(
            json!({"type": "move", "uci": "e2e4"}).to_string(),
        ))
        .await
        .expect("send");
    within(WAIT, "the move's state", async {
        while let Some(Ok(message)) = socket.next().await {
            if let Message::Text(text) = message {
                let value: Value = serde_json::from_str(text.as_str()).expect("JSON");
                if value["game"]["moves"]
                    .as_array()
                    .is_some_and(|m| m.len() == 1)
                {
                    break;
                }
            }
        }
    })
    .await;
    // Whatever the server makes of it (an error, or a close), it must have
    // read it before it stops: wait for its answer.
    socket
        .send(Message::text(
            json!({"type": "hello", "token": black}).to_string(),
        ))
        .await
        .expect("send");
    let _answer = within(WAIT, "an answer to the token message", socket.next()).await;
    // Bearer actions and a token misplaced in a query and in a path.
    let (status, _) = post(
        &http,
        url(&format!("/api/games/{id}/move")),
        Some(&black),
        Some(json!({"uci": "e7e5"})),
    )
    .await;
    assert_eq!(status, 200);
    let misplaced = http
        .get(url(&format!(
            "/api/games/{id}?token={black}&invite={invite}"
        )))
        .send()
        .await
        .expect("GET");
    assert_eq!(misplaced.status(), 200);
    let misplaced = http
        .get(url(&format!("/api/games/{player_token}")))
        .send()
        .await
        .expect("GET");
    assert_eq!(misplaced.status(), 404);
    drop(socket);

    // Graceful stop, so everything is written.
    let pid = child.id().expect("pid") as i32;
    // SAFETY: sending a signal to our own child process.
    assert_eq!(unsafe { libc::kill(pid, libc::SIGTERM) }, 0);
    let status = within(WAIT, "the server to exit", child.wait())
        .await
        .expect("wait");
    assert!(status.success(), "exit status {status}");

    let log = std::fs::read_to_string(&log_path).expect("read the log");
    for (name, secret) in [
        ("player token", &player_token),
        ("white seat token", &white),
        ("black seat token", &black),
        ("invite secret", &invite),
    ] {
        for form in [secret.clone(), hex(secret)] {
            if let Some(at) = log.find(&form) {
                let start = log[..at].rfind('\n').map_or(0, |n| n + 1);
                let end = log[at..].find('\n').map_or(log.len(), |n| at + n);
                panic!("the {name} is in the log:\n{}", &log[start..end]);
            }
        }
    }
    // The log is really at trace level and saw these requests.
    // (Which crates write TRACE lines depends on the HTTP stack; the
    // request spans are DEBUG, so a verbose log always has those.)
    assert!(log.contains("DEBUG"), "a verbose log");
    assert!(log.contains(&format!("/ws/games/{id}?token=[redacted]")));
    assert!(log.contains("invite=[redacted]"));
    log
}

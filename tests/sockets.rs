//! The WebSocket at scale and under abuse: fan-out to many subscribers,
//! spectator counts as small messages (seats as states), the pong deadline, the write and lag limits
//! for slow readers, the token outside the URL, and the rate budget that
//! pings and binary frames share with text.

mod support;

use futures_util::StreamExt;
use serde_json::{json, Value};
use support::*;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio_tungstenite::tungstenite::client::IntoClientRequest;
use tokio_tungstenite::tungstenite::protocol::frame::coding::CloseCode;
use tokio_tungstenite::tungstenite::Message;

/// A WebSocket upgrade by hand: the socket after the 101 answer.
async fn raw_upgrade(server: &TestServer, path: &str) -> TcpStream {
    let mut stream = TcpStream::connect(server.addr).await.expect("connect");
    let request = format!(
        "GET {path} HTTP/1.1\r\nHost: {}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\
         Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n",
        server.addr
    );
    stream.write_all(request.as_bytes()).await.expect("write");
    // Read the answer's head byte by byte, so no frame is consumed.
    let mut head = Vec::new();
    while !head.ends_with(b"\r\n\r\n") {
        let mut byte = [0u8; 1];
        within(WAIT, "the upgrade answer", stream.read_exact(&mut byte))
            .await
            .expect("read");
        head.push(byte[0]);
    }
    let head = String::from_utf8_lossy(&head);
    assert!(head.starts_with("HTTP/1.1 101"), "{head}");
    stream
}

/// The (opcode, payload) of each unmasked frame in `bytes`.
fn server_frames(mut bytes: &[u8]) -> Vec<(u8, Vec<u8>)> {
    let mut frames = Vec::new();
    while bytes.len() >= 2 {
        let opcode = bytes[0] & 0x0f;
        let (len, header) = match bytes[1] & 0x7f {
            126 => (usize::from(u16::from_be_bytes([bytes[2], bytes[3]])), 4),
            127 => {
                let mut len = [0u8; 8];
                len.copy_from_slice(&bytes[2..10]);
                (u64::from_be_bytes(len) as usize, 10)
            }
            len => (usize::from(len), 2),
        };
        let Some(payload) = bytes.get(header..header + len) else {
            break;
        };
        frames.push((opcode, payload.to_vec()));
        bytes = &bytes[header + len..];
    }
    frames
}

/// A spectator socket opened over a fresh TCP connection.
async fn spectator(server: &TestServer, id: &str) -> WsClient {
    WsClient::connect(server, id, None).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_state_reaches_a_thousand_subscribers() {
    raise_open_files_limit();
    let db = TestDb::new();
    let server = TestServer::start(test_config(&db)).await;
    a_move_reaches_spectators(&server, 1000).await;
    server.stop().await;
}

#[tokio::test]
async fn spectator_counts_are_a_small_message_seats_a_state() {
    let db = TestDb::new();
    let server = TestServer::start(test_config(&db)).await;
    let (id, white, _) = server.human_game(json!({})).await;
    let mut first = spectator(&server, &id).await;
    assert_eq!(first.next_state().await["spectators"], 1);

    // Another spectator arrives: the first one learns it from a presence
    // message, and its next message is that, not a whole state.
    let mut second = spectator(&server, &id).await;
    assert_eq!(second.next_state().await["spectators"], 2);
    let presence = first.next_message().await;
    assert_eq!(
        presence,
        json!({"type": "presence", "white": false, "black": false, "spectators": 2})
    );
    assert!(presence.to_string().len() < 100, "{presence}");

    // A seat connecting and leaving changes the GameState's `connected`:
    // that is a whole state (the contract promises one after every change).
    let player = WsClient::connect(&server, &id, Some(&white)).await;
    let message = first.next_message().await;
    assert_eq!(message["type"], "state", "{message}");
    assert_eq!(message["game"]["white"]["connected"], true);
    drop(player);
    let message = first.next_message().await;
    assert_eq!(message["type"], "state", "{message}");
    assert_eq!(message["game"]["white"]["connected"], false);
    assert_eq!(message["game"]["spectators"], 2);

    // A change of the game itself is still a whole state.
    server.play(&id, &white, "d2d4").await;
    let message = first.next_message().await;
    assert_eq!(message["type"], "state", "{message}");
    assert_eq!(moves(&message["game"]), ["d2d4"]);
    server.stop().await;
}

#[tokio::test]
async fn a_seat_connecting_sends_spectators_a_whole_state() {
    let db = TestDb::new();
    let server = TestServer::start(test_config(&db)).await;
    let (id, white, _) = server.human_game(json!({})).await;
    let mut watcher = spectator(&server, &id).await;
    let first = watcher.next_state().await;
    assert_eq!(first["white"]["connected"], false);

    // `next` skips `presence` messages: only a state satisfies it.
    let player = WsClient::connect(&server, &id, Some(&white)).await;
    let connected = watcher.next_state().await;
    assert_eq!(connected["white"]["connected"], true, "{connected}");
    assert_eq!(connected["spectators"], 1);
    assert_eq!(connected["moves"], json!([]));
    drop(player);
    let gone = watcher.next_state().await;
    assert_eq!(gone["white"]["connected"], false, "{gone}");
    server.stop().await;
}

#[tokio::test]
async fn a_peer_that_ignores_pings_is_closed_and_its_seat_shows_disconnected() {
    let db = TestDb::new();
    let mut config = test_config(&db);
    config.ws.ws_ping_interval_ms = 100;
    config.ws.ws_pong_timeout_ms = 300;
    let server = TestServer::start(config).await;
    let (id, white, _) = server.human_game(json!({})).await;

    // A spectator that keeps reading answers the pings (the client library
    // does it while reading) and stays.
    let mut watcher = spectator(&server, &id).await;
    watcher.next_state().await;
    let reading = tokio::spawn(async move {
        let mut pings = 0;
        while pings < 10 {
            match watcher.socket.next().await {
                Some(Ok(Message::Ping(_))) => pings += 1,
                Some(Ok(_)) => {}
                other => panic!("the reading spectator lost its socket: {other:?}"),
            }
        }
        watcher
    });

    // White upgrades, then neither reads nor writes: its pings go
    // unanswered. (A raw socket: a WebSocket library answers pings by
    // itself whenever it reads.)
    let mut silent = raw_upgrade(&server, &format!("/ws/games/{id}?token={white}")).await;
    server
        .wait_state(&id, "white connected", |s| s["white"]["connected"] == true)
        .await;
    server
        .wait_state(&id, "white shown disconnected", |s| {
            s["white"]["connected"] == false
        })
        .await;
    let watcher = within(WAIT, "ten pings answered", reading)
        .await
        .expect("reader");
    assert_eq!(server.state(&id).await["spectators"], 1);

    // What the silent peer finds once it reads: its state, pings, and the
    // close code.
    let mut bytes = Vec::new();
    within(
        WAIT,
        "the server to end the connection",
        silent.read_to_end(&mut bytes),
    )
    .await
    .expect("read");
    let frames = server_frames(&bytes);
    assert_eq!(frames.first().map(|f| f.0), Some(1), "a text frame first");
    let close = frames.iter().find(|f| f.0 == 8).expect("a close frame");
    assert_eq!(close.1.get(..2), Some(&4000u16.to_be_bytes()[..]));
    drop(watcher);
    server.stop().await;
}

#[tokio::test]
async fn the_token_can_come_in_the_first_message() {
    let db = TestDb::new();
    let server = TestServer::start(test_config(&db)).await;
    let (id, white, _) = server.human_game(json!({})).await;
    let (other, other_white, _) = server.human_game(json!({})).await;
    assert_ne!(other, id);

    let mut ws = spectator(&server, &id).await;
    assert_eq!(ws.next_state().await["spectators"], 1);
    // Spectators cannot act; wrong tokens are refused and change nothing.
    ws.send(json!({"type": "move", "uci": "e2e4"})).await;
    ws.expect_error("forbidden").await;
    ws.send(json!({"type": "auth", "token": "nope"})).await;
    ws.expect_error("unauthorized").await;
    ws.send(json!({"type": "auth", "token": other_white})).await;
    ws.expect_error("forbidden").await;
    ws.send(json!({"type": "auth"})).await;
    ws.expect_error("bad_request").await;

    ws.send(json!({"type": "auth", "token": white})).await;
    let answer = ws.next().await;
    assert_eq!(answer, json!({"type": "authenticated", "color": "white"}));
    let state = server
        .wait_state(&id, "white connected", |s| s["white"]["connected"] == true)
        .await;
    assert_eq!(state["spectators"], 0);
    ws.send(json!({"type": "auth", "token": white})).await;
    ws.expect_error("bad_request").await;

    ws.send(json!({"type": "move", "uci": "e2e4"})).await;
    let moved = ws.state_where("the move", |s| !moves(s).is_empty()).await;
    assert_eq!(moves(&moved), ["e2e4"]);
    drop(ws);
    server
        .wait_state(&id, "white disconnected", |s| {
            s["white"]["connected"] == false && s["spectators"] == 0
        })
        .await;
    server.stop().await;
}

/// Opens a WebSocket offering `protocols` (comma-separated).
async fn connect_with_protocols(
    server: &TestServer,
    id: &str,
    protocols: &str,
) -> Result<(Socket, Option<String>), tokio_tungstenite::tungstenite::Error> {
    let mut request = server
        .ws_url(&format!("/ws/games/{id}"))
        .into_client_request()?;
    request.headers_mut().insert(
        "Sec-WebSocket-Protocol",
        protocols.parse().expect("header value"),
    );
    let (socket, response) = within(
        WAIT,
        "WebSocket connect",
        tokio_tungstenite::connect_async(request),
    )
    .await?;
    let selected = response
        .headers()
        .get("Sec-WebSocket-Protocol")
        .and_then(|v| v.to_str().ok())
        .map(str::to_string);
    Ok((socket, selected))
}

#[tokio::test]
async fn the_token_can_come_as_a_subprotocol() {
    let db = TestDb::new();
    let server = TestServer::start(test_config(&db)).await;
    let (id, white, black) = server.human_game(json!({})).await;
    server.play(&id, &white, "e2e4").await;

    let (socket, selected) =
        connect_with_protocols(&server, &id, &format!("rookery, rookery.token.{black}"))
            .await
            .expect("upgrade");
    // The server names its protocol, never echoes the token.
    assert_eq!(selected.as_deref(), Some("rookery"));
    let mut ws = WsClient { socket };
    let first = ws.next_state().await;
    assert_eq!(first["black"]["connected"], true);
    assert_eq!(first["spectators"], 0);
    ws.send(json!({"type": "move", "uci": "e7e5"})).await;
    let moved = ws.state_where("the move", |s| moves(s).len() == 2).await;
    assert_eq!(moves(&moved), ["e2e4", "e7e5"]);

    // Unknown tokens are refused before the upgrade, as with `?token=`.
    let refused = connect_with_protocols(&server, &id, "rookery, rookery.token.0123")
        .await
        .expect_err("an unknown token");
    match refused {
        tokio_tungstenite::tungstenite::Error::Http(response) => {
            assert_eq!(response.status().as_u16(), 401)
        }
        other => panic!("expected HTTP 401, got {other:?}"),
    }
    // Without a token subprotocol the connection is a spectator.
    let (socket, selected) = connect_with_protocols(&server, &id, "rookery")
        .await
        .expect("upgrade");
    assert_eq!(selected.as_deref(), Some("rookery"));
    let mut watcher = WsClient { socket };
    assert_eq!(watcher.next_state().await["spectators"], 1);
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_reader_that_falls_behind_is_closed_with_4008() {
    let db = TestDb::new();
    let mut config = test_config(&db);
    config.ws.ws_max_lag = 4;
    // Lag, not the write timeout, is what this test is about.
    config.ws.ws_write_timeout_ms = 120_000;
    // Small kernel buffers on both ends.
    let server = TestServer::start_on(small_buffer_listener(), config).await;
    let (id, white, black) = server.human_game(json!({})).await;
    let socket = small_buffer_spectator(&server, &id).await;
    let mut slow = WsClient { socket };
    assert_eq!(slow.next_state().await["spectators"], 1);

    // The slow reader reads nothing while the game goes on.
    let line = long_line(120);
    for (ply, uci) in line.iter().enumerate() {
        server
            .play(&id, if ply % 2 == 0 { &white } else { &black }, uci)
            .await;
    }
    // When it reads at last, it finds states in order, then the close.
    let mut last_ply = 0;
    let code = within(WAIT, "the close frame", async {
        loop {
            match slow.socket.next().await {
                Some(Ok(Message::Text(text))) => {
                    let message: Value = serde_json::from_str(text.as_str()).expect("JSON");
                    if message["type"] == "state" {
                        let ply = moves(&message["game"]).len();
                        assert!(ply > last_ply, "states out of order");
                        last_ply = ply;
                    }
                }
                Some(Ok(Message::Close(frame))) => return frame.map(|f| f.code),
                Some(Ok(_)) => continue,
                other => panic!("no close frame: {other:?}"),
            }
        }
    })
    .await;
    assert_eq!(code, Some(CloseCode::from(4008)));
    assert!(last_ply < line.len(), "it did fall behind");
    server
        .wait_state(&id, "the slow spectator gone", |s| s["spectators"] == 0)
        .await;
    // Reconnecting brings it up to date.
    let mut again = spectator(&server, &id).await;
    assert_eq!(moves(&again.next_state().await), line);
    server.stop().await;
}

#[tokio::test]
async fn pings_and_binary_frames_spend_the_rate_budget() {
    let db = TestDb::new();
    let mut config = test_config(&db);
    config.ws.ws_rate_burst = 3;
    config.ws.ws_rate_limit = 0.001;
    let server = TestServer::start(config).await;
    let (id, white, _) = server.human_game(json!({})).await;
    let mut ws = WsClient::connect(&server, &id, Some(&white)).await;
    ws.next_state().await;
    ws.send_raw(Message::Ping(Vec::new().into())).await;
    ws.send_raw(Message::Ping(Vec::new().into())).await;
    ws.send_raw(Message::Binary(vec![1, 2, 3].into())).await;
    ws.expect_error("bad_request").await;
    // The budget is spent: the move is refused and the game unchanged.
    ws.send(json!({"type": "move", "uci": "e2e4"})).await;
    ws.expect_error("rate_limited").await;
    ws.send_raw(Message::Ping(Vec::new().into())).await;
    ws.expect_error("rate_limited").await;
    assert!(moves(&server.state(&id).await).is_empty());
    server.stop().await;
}

#[tokio::test]
async fn a_reader_gets_every_state_in_order_while_spectators_come_and_go() {
    let db = TestDb::new();
    let server = TestServer::start(test_config(&db)).await;
    let (id, white, black) = server.human_game(json!({})).await;
    let mut reader = spectator(&server, &id).await;
    reader.next_state().await;
    let line = long_line(20);
    for (ply, uci) in line.iter().enumerate() {
        // Churn: a spectator arrives and leaves around every move.
        let mut visitor = spectator(&server, &id).await;
        visitor.next_state().await;
        server
            .play(&id, if ply % 2 == 0 { &white } else { &black }, uci)
            .await;
        drop(visitor);
        let seen = reader.next_state().await;
        assert_eq!(moves(&seen), line[..=ply], "after ply {ply}");
    }
    let _ = reader.socket.close(None).await;
    server.stop().await;
}

#[tokio::test]
async fn tokens_sent_as_a_subprotocol_or_an_auth_message_stay_out_of_the_log() {
    use std::process::Stdio;

    let dir = tempfile::tempdir().expect("temporary directory");
    let log_path = dir.path().join("server.log");
    let log_file = std::fs::File::create(&log_path).expect("log file");
    let mut child = tokio::process::Command::new(env!("CARGO_BIN_EXE_rookery-server"))
        .args(["--addr", "127.0.0.1:0", "--database"])
        .arg(dir.path().join("rookery.db"))
        .env("RUST_LOG", "trace")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(log_file)
        .kill_on_drop(true)
        .spawn()
        .expect("start rookery-server");
    let base = listening_base(&mut child).await;
    let addr = base.trim_start_matches("http://").to_string();
    let http = reqwest::Client::new();
    let created: Value = http
        .post(format!("http://{addr}/api/games"))
        .json(&json!({"white": {"kind": "human"}, "black": {"kind": "human"}}))
        .send()
        .await
        .expect("create")
        .json()
        .await
        .expect("JSON");
    let id = created["game"]["id"].as_str().expect("id").to_string();
    let white = created["seat"]["token"]
        .as_str()
        .expect("token")
        .to_string();
    let joined: Value = http
        .post(format!("http://{addr}/api/games/{id}/join"))
        .send()
        .await
        .expect("join")
        .json()
        .await
        .expect("JSON");
    let black = joined["seat"]["token"].as_str().expect("token").to_string();

    // White by subprotocol, black by an auth message.
    let mut request = format!("ws://{addr}/ws/games/{id}")
        .into_client_request()
        .expect("request");
    request.headers_mut().insert(
        "Sec-WebSocket-Protocol",
        format!("rookery, rookery.token.{white}")
            .parse()
            .expect("header"),
    );
    let (socket, _) = within(WAIT, "connect", tokio_tungstenite::connect_async(request))
        .await
        .expect("upgrade");
    let mut white_ws = WsClient { socket };
    assert_eq!(white_ws.next_state().await["white"]["connected"], true);
    let (socket, _) = within(
        WAIT,
        "connect",
        tokio_tungstenite::connect_async(format!("ws://{addr}/ws/games/{id}")),
    )
    .await
    .expect("upgrade");
    let mut black_ws = WsClient { socket };
    black_ws.next_state().await;
    black_ws.send(json!({"type": "auth", "token": black})).await;
    assert_eq!(black_ws.next().await["type"], "authenticated");
    drop((white_ws, black_ws));

    let pid = child.id().expect("pid") as i32;
    // SAFETY: sending a signal to our own child process.
    assert_eq!(unsafe { libc::kill(pid, libc::SIGTERM) }, 0);
    let status = within(WAIT, "the server to exit", child.wait())
        .await
        .expect("wait");
    assert!(status.success(), "exit status {status}");
    let log = std::fs::read_to_string(&log_path).expect("read the log");
    // Which crates write TRACE lines depends on the HTTP stack; the request
    // spans are DEBUG, so a verbose log always has those.
    assert!(log.contains("DEBUG"), "a verbose log");
    assert!(
        log.contains(&format!("/ws/games/{id}")),
        "the upgrades are logged"
    );
    for (name, secret) in [("white", &white), ("black", &black)] {
        let hex: String = secret.bytes().map(|b| format!("{b:02x}")).collect();
        for form in [secret.clone(), hex] {
            if let Some(at) = log.find(&form) {
                let start = log[..at].rfind('\n').map_or(0, |n| n + 1);
                let end = log[at..].find('\n').map_or(log.len(), |n| at + n);
                panic!("the {name} token is in the log:\n{}", &log[start..end]);
            }
        }
    }
}

/// The server raises its soft open-files limit to the hard limit at start:
/// every socket is a descriptor, and a soft default of 1024 (or, here, 512)
/// would cap a node at a few hundred spectators.
#[cfg(target_os = "linux")]
#[tokio::test]
async fn the_server_raises_its_open_files_limit_at_start() {
    use std::process::Stdio;

    let dir = tempfile::tempdir().expect("temporary directory");
    let script = format!(
        "ulimit -Sn 512 && exec '{}' --addr 127.0.0.1:0 --database '{}'",
        env!("CARGO_BIN_EXE_rookery-server"),
        dir.path().join("rookery.db").display()
    );
    let mut child = tokio::process::Command::new("sh")
        .args(["-c", &script])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .expect("start rookery-server");
    let base = listening_base(&mut child).await;
    // Once it has answered a request it is serving, and so handles SIGTERM
    // (a signal right after the `listening on` line is another matter).
    let health = reqwest::get(format!("{base}/healthz")).await.expect("GET");
    assert_eq!(health.status(), 200);
    let pid = child.id().expect("pid");
    let limits = std::fs::read_to_string(format!("/proc/{pid}/limits")).expect("limits");
    let line = limits
        .lines()
        .find(|l| l.starts_with("Max open files"))
        .expect("the open-files line");
    let numbers: Vec<&str> = line["Max open files".len()..].split_whitespace().collect();
    assert_eq!(numbers.first(), numbers.get(1), "soft = hard: {line}");
    assert_ne!(numbers.first(), Some(&"512"), "{line}");
    // SAFETY: sending a signal to our own child process.
    assert_eq!(unsafe { libc::kill(pid as i32, libc::SIGTERM) }, 0);
    let status = within(WAIT, "the server to exit", child.wait())
        .await
        .expect("wait");
    assert!(status.success(), "exit status {status}");
}

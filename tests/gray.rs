//! Gray failures and abuse (issue 23), from outside: a stream cut before
//! its game's end says so, and a body announced too large is refused at
//! once.

mod support;

use std::time::Duration;

use serde_json::{json, Value};
use support::cluster::shared_postgres;
use support::*;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

#[tokio::test]
async fn a_stream_cut_before_the_end_says_so_in_its_last_line() {
    let db = TestDb::new();
    let server = TestServer::start(test_config(&db)).await;
    let (id, white, _) = server.human_game(json!({})).await;
    server.play(&id, &white, "e2e4").await;
    let mut response = server
        .http
        .get(server.url(&format!("/api/games/{id}/stream")))
        .send()
        .await
        .expect("stream");
    let first = response.chunk().await.expect("chunk").expect("a line");
    let state: Value = serde_json::from_slice(&first).expect("a GameState");
    assert_eq!(state["status"], "active");
    let reading = tokio::spawn(async move {
        let mut rest = Vec::new();
        while let Ok(Some(chunk)) = response.chunk().await {
            rest.extend_from_slice(&chunk);
        }
        rest
    });
    server.stop().await;
    let rest = within(Duration::from_secs(20), "the stream's end", reading)
        .await
        .expect("reader");
    let text = String::from_utf8(rest).expect("utf-8");
    let last = text.lines().last().expect("a last line");
    let last: Value = serde_json::from_str(last).expect("JSON");
    assert_eq!(
        last,
        json!({"type": "stream_end", "reason": "shutdown", "reconnect": true})
    );
}

#[tokio::test]
async fn a_body_announced_too_large_is_refused_at_once() {
    let db = TestDb::new();
    let server = TestServer::start(test_config(&db)).await;
    let mut socket = tokio::net::TcpStream::connect(server.addr)
        .await
        .expect("connect");
    let request = format!(
        "POST /api/games HTTP/1.1\r\nHost: {}\r\nContent-Type: application/json\r\n\
         Content-Length: 10000000000\r\n\r\n{{",
        server.addr
    );
    socket.write_all(request.as_bytes()).await.expect("send");
    let mut answer = Vec::new();
    within(Duration::from_secs(10), "the 413", async {
        let mut buffer = [0u8; 4096];
        loop {
            let n = socket.read(&mut buffer).await.expect("read");
            answer.extend_from_slice(&buffer[..n]);
            if n == 0 || answer.windows(4).any(|w| w == b"\r\n\r\n") && answer.ends_with(b"}") {
                break;
            }
        }
    })
    .await;
    let text = String::from_utf8_lossy(&answer);
    assert!(text.starts_with("HTTP/1.1 413"), "{text}");
    assert!(text.contains("\"too_large\""), "{text}");
    // (Within the 10 s above: the body timer would have taken 30 s.)
    server.stop().await;
}

/// Sends `request` on a fresh connection and reads the answer to its end
/// (the server closes the connection after these refusals).
async fn raw_answer(server: &TestServer, request: &[u8]) -> String {
    let mut socket = tokio::net::TcpStream::connect(server.addr)
        .await
        .expect("connect");
    socket.write_all(request).await.expect("send");
    let mut answer = Vec::new();
    within(Duration::from_secs(10), "the answer", async {
        let mut buffer = [0u8; 4096];
        loop {
            let n = socket.read(&mut buffer).await.unwrap_or(0);
            answer.extend_from_slice(&buffer[..n]);
            if n == 0 || answer.windows(4).any(|w| w == b"\r\n\r\n") && answer.ends_with(b"}") {
                break;
            }
        }
    })
    .await;
    String::from_utf8_lossy(&answer).into_owned()
}

/// A request target too long, too many or too large headers, and an
/// HTTP/1.1 request with no `Host` get the contract's error shape (414,
/// 431, 400), not a bare status line; a request within the limits is
/// served.
#[tokio::test]
async fn oversized_heads_and_hostless_requests_get_the_error_shape() {
    let db = TestDb::new();
    let server = TestServer::start(test_config(&db)).await;
    let long_target = format!(
        "GET /api/games?x={} HTTP/1.1\r\nHost: test\r\n\r\n",
        "a".repeat(9 * 1024)
    );
    let text = raw_answer(&server, long_target.as_bytes()).await;
    assert!(text.starts_with("HTTP/1.1 414"), "{text}");
    assert!(text.contains("\"too_large\""), "{text}");

    let many: String = (0..150).map(|i| format!("X-Filler-{i}: {i}\r\n")).collect();
    let many_headers = format!("GET /api/games HTTP/1.1\r\nHost: test\r\n{many}\r\n");
    let text = raw_answer(&server, many_headers.as_bytes()).await;
    assert!(text.starts_with("HTTP/1.1 431"), "{text}");
    assert!(text.contains("\"too_large\""), "{text}");

    let big_header = format!(
        "GET /api/games HTTP/1.1\r\nHost: test\r\nX-Big: {}\r\n\r\n",
        "b".repeat(40 * 1024)
    );
    let text = raw_answer(&server, big_header.as_bytes()).await;
    assert!(text.starts_with("HTTP/1.1 431"), "{text}");
    assert!(text.contains("\"too_large\""), "{text}");

    let text = raw_answer(&server, b"GET /api/games HTTP/1.1\r\n\r\n").await;
    assert!(text.starts_with("HTTP/1.1 400"), "{text}");
    assert!(text.contains("\"bad_request\""), "{text}");
    assert!(text.contains("Host"), "{text}");

    // HTTP/1.0 has no Host requirement; within the limits all is served.
    let text = raw_answer(&server, b"GET /healthz HTTP/1.0\r\n\r\n").await;
    assert!(
        text.starts_with("HTTP/1.0 200") || text.starts_with("HTTP/1.1 200"),
        "{text}"
    );
    let fine = format!(
        "GET /api/games?x={} HTTP/1.1\r\nHost: test\r\nConnection: close\r\n{}\r\n",
        "a".repeat(1024),
        (0..50)
            .map(|i| format!("X-Filler-{i}: {i}\r\n"))
            .collect::<String>()
    );
    let text = raw_answer(&server, fine.as_bytes()).await;
    assert!(text.starts_with("HTTP/1.1 200"), "{text}");
    server.stop().await;
}

/// The server's sockets on `port` (not the listener) and the bytes queued
/// in their kernel send buffers, from /proc/net/tcp.
fn server_send_queues(port: u16) -> (usize, usize) {
    let table = std::fs::read_to_string("/proc/net/tcp").unwrap_or_default();
    let mut sockets = 0;
    let mut queued = 0;
    for line in table.lines().skip(1) {
        let fields: Vec<&str> = line.split_whitespace().collect();
        let (Some(local), Some(state), Some(queues)) =
            (fields.get(1), fields.get(3), fields.get(4))
        else {
            continue;
        };
        let local_port = local
            .rsplit(':')
            .next()
            .and_then(|hex| u16::from_str_radix(hex, 16).ok());
        if local_port != Some(port) || *state == "0A" {
            continue;
        }
        sockets += 1;
        queued += queues
            .split(':')
            .next()
            .and_then(|hex| usize::from_str_radix(hex, 16).ok())
            .unwrap_or(0);
    }
    (sockets, queued)
}

/// Clients that stop reading cannot make the server hold unbounded memory:
/// `--send-buffer-bytes` bounds each connection's kernel send buffer, and
/// an NDJSON stream whose reader stopped taking lines is closed after the
/// write timer (`--ws-write-timeout-ms`), as a WebSocket is.
#[tokio::test]
async fn non_reading_streams_hold_bounded_memory_and_are_closed() {
    const STREAMS: usize = 200;
    const SEND_BUFFER: usize = 16 * 1024;
    let db = TestDb::new();
    let mut config = test_config(&db);
    config.http.max_connections_per_ip = 1000;
    config.http.send_buffer_bytes = SEND_BUFFER;
    config.ws.ws_write_timeout_ms = 2_000;
    let server = TestServer::start(config).await;
    let (id, white, black) = server.human_game(json!({})).await;
    let mut stalled = Vec::new();
    for _ in 0..STREAMS {
        let socket = tokio::net::TcpSocket::new_v4().expect("socket");
        // A small receive window, so what the client does not read stays
        // in the server's send queue rather than in its own buffer.
        socket.set_recv_buffer_size(4096).expect("SO_RCVBUF");
        let mut stream = socket.connect(server.addr).await.expect("connect");
        stream
            .write_all(
                format!("GET /api/games/{id}/stream HTTP/1.1\r\nHost: test\r\n\r\n").as_bytes(),
            )
            .await
            .expect("request");
        stalled.push(stream);
    }
    // Moves until each stream owes its reader far more than the bound.
    let mut state = server.state(&id).await;
    let mut plies = 0;
    for ply in 0..90usize {
        let legal: Vec<String> = state["legal_moves"]
            .as_array()
            .expect("legal moves")
            .iter()
            .filter_map(|uci| uci.as_str().map(str::to_string))
            .collect();
        if state["status"] != "active" || legal.is_empty() {
            break;
        }
        let token = if ply % 2 == 0 { &white } else { &black };
        state = server
            .play(&id, token, &legal[(ply * 7 + 3) % legal.len()])
            .await;
        plies += 1;
    }
    assert!(plies >= 60, "only {plies} plies before the game ended");
    tokio::time::sleep(Duration::from_millis(500)).await;
    let (sockets, queued) = server_send_queues(server.addr.port());
    eprintln!("{sockets} server sockets, {queued} bytes in their send queues after {plies} plies");
    // The kernel doubles SO_SNDBUF for its bookkeeping: at most twice the
    // flag per socket, plus slack.
    let bound = STREAMS * (2 * SEND_BUFFER + 8 * 1024);
    assert!(queued <= bound, "{queued} bytes queued, over {bound}");
    // The write timer closes each stalled stream: reading now gets what
    // was queued, then the end.
    tokio::time::sleep(Duration::from_secs(4)).await;
    let mut ended = 0;
    for mut stream in stalled {
        let read_all = async {
            let mut buffer = vec![0u8; 64 * 1024];
            loop {
                match stream.read(&mut buffer).await {
                    Ok(0) | Err(_) => return,
                    Ok(_) => {}
                }
            }
        };
        if tokio::time::timeout(Duration::from_secs(5), read_all)
            .await
            .is_ok()
        {
            ended += 1;
        }
    }
    assert_eq!(ended, STREAMS, "streams still open after the write timer");
    // The game itself went on untouched.
    assert_eq!(
        server.state(&id).await["moves"].as_array().map(Vec::len),
        Some(plies)
    );
    server.stop().await;
}

/// A node started on a cluster's database without `--nats` would be an
/// unfenced second writer: it refuses to start, and says why.
#[tokio::test]
async fn a_node_without_nats_refuses_a_clusters_database() {
    let postgres = shared_postgres();
    let name = postgres.create_database();
    let url = postgres.url(&name);
    let dir = tempfile::tempdir().expect("temporary directory");
    let _ = dir;
    // A first start creates the schema; nobody holds a lease: it serves.
    let mut child = server_binary(&["--addr", "127.0.0.1:0", "--database", &url])
        .spawn()
        .expect("rookery-server");
    listening_base(&mut child).await;
    sigterm(&child);
    exits_zero(child, "the first node").await;
    // A cluster node holds a live lease on a game.
    let far = i64::MAX / 2;
    postgres.query(
        &name,
        &format!(
            "INSERT INTO game_leases (game_id, owner, epoch, expires_at) \
             VALUES ('00000000-0000-0000-0000-000000000001', 'node-a', 1, {far})"
        ),
    );
    let refused = server_binary(&["--addr", "127.0.0.1:0", "--database", &url])
        .stderr(std::process::Stdio::piped())
        .output()
        .await
        .expect("rookery-server");
    assert!(!refused.status.success(), "it must not start");
    let said = String::from_utf8_lossy(&refused.stderr);
    assert!(
        said.contains("belongs to a cluster") && said.contains("--nats"),
        "{said}"
    );
    assert!(refused.stdout.is_empty(), "no listening line");
}

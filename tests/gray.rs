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

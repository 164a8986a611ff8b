//! Limits a client cannot escape: rate limits keyed by client address (not
//! by connection), trusted proxies, connection caps, header and idle
//! timeouts (slowloris), and the cross-site (Origin) check.

mod support;

use std::time::Duration;

use serde_json::{json, Value};
use support::*;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio_tungstenite::tungstenite::client::IntoClientRequest;
use tokio_tungstenite::tungstenite::Message;

/// A rate limit of `burst` requests and then (practically) none.
fn tight(config: &mut rookery_server::Config, burst: u32) {
    config.http.rate_limit = 0.001;
    config.http.rate_burst = burst;
}

/// A GET of `/api/levels` claiming to come, through a proxy, from `client`.
async fn via_proxy(server: &TestServer, client: &str) -> u16 {
    server
        .http
        .get(server.url("/api/levels"))
        .header("x-forwarded-for", client)
        .send()
        .await
        .expect("GET")
        .status()
        .as_u16()
}

#[tokio::test]
async fn forwarded_headers_count_only_from_a_trusted_proxy() {
    // Behind a trusted proxy (the tests' 127.0.0.1), each forwarded client
    // has its own bucket...
    let db = TestDb::new();
    let mut config = test_config(&db);
    tight(&mut config, 2);
    config.http.trusted_proxies = vec!["127.0.0.0/8".parse().expect("range")];
    let server = TestServer::start(config).await;
    let mut statuses = Vec::new();
    for client in [
        "198.51.100.1",
        "198.51.100.1",
        "198.51.100.2",
        "198.51.100.2",
    ] {
        statuses.push(via_proxy(&server, client).await);
    }
    statuses.push(via_proxy(&server, "198.51.100.1").await);
    assert_eq!(statuses, [200, 200, 200, 200, 429]);
    server.stop().await;

    // ...while from an untrusted peer the header is ignored: one bucket.
    let db = TestDb::new();
    let mut config = test_config(&db);
    tight(&mut config, 2);
    let server = TestServer::start(config).await;
    let mut statuses = Vec::new();
    for client in ["198.51.100.1", "198.51.100.2", "198.51.100.3"] {
        statuses.push(via_proxy(&server, client).await);
    }
    assert_eq!(statuses, [200, 200, 429]);
    server.stop().await;
}

#[tokio::test]
async fn websocket_messages_share_one_budget_per_address() {
    let db = TestDb::new();
    let mut config = test_config(&db);
    config.ws.ws_rate_limit = 0.001;
    config.ws.ws_rate_burst = 3;
    let server = TestServer::start(config).await;
    let (id, white, _black) = server.human_game(json!({})).await;
    let mut first = WsClient::connect(&server, &id, Some(&white)).await;
    first.next_state().await;
    for _ in 0..3 {
        first.send_raw(Message::text("not json")).await;
        first.expect_error("bad_request").await;
    }
    // A second socket from the same address starts with the same bucket.
    let mut second = WsClient::connect(&server, &id, None).await;
    second.next_state().await;
    second.send_raw(Message::text("not json")).await;
    second.expect_error("rate_limited").await;
    server.stop().await;
}

/// Reads what the server sends until it closes the connection.
async fn read_to_close(stream: &mut TcpStream) -> String {
    let mut received = Vec::new();
    within(WAIT, "the server to close the connection", async {
        let mut buffer = [0u8; 4096];
        loop {
            match stream.read(&mut buffer).await {
                Ok(0) | Err(_) => break,
                Ok(n) => received.extend_from_slice(&buffer[..n]),
            }
        }
    })
    .await;
    String::from_utf8_lossy(&received).into_owned()
}

const HEALTHZ: &[u8] = b"GET /healthz HTTP/1.1\r\nHost: test\r\nConnection: close\r\n\r\n";

/// Holds connections open until the server refuses one; returns what the
/// refused connection received and the connections held.
async fn hold_until_refused(server: &TestServer, cap: usize) -> (String, Vec<TcpStream>) {
    let mut held = Vec::new();
    let refused = within(WAIT, "a refused connection", async {
        loop {
            let mut stream = TcpStream::connect(server.addr).await.expect("connect");
            stream.write_all(HEALTHZ).await.expect("write");
            let answer = read_to_close(&mut stream).await;
            if !answer.starts_with("HTTP/1.1 200") {
                return answer;
            }
            // Served: hold a connection open instead and try again. (The
            // start-up probe's pooled connection may count too.)
            held.push(TcpStream::connect(server.addr).await.expect("connect"));
            assert!(
                held.len() <= cap,
                "more than {cap} connections were held open"
            );
        }
    })
    .await;
    (refused, held)
}

/// A refused connection got `status` in the error shape with `code`, or
/// nothing when our request raced the close (the kernel then resets it).
fn assert_refused(answer: &str, status: u16, code: &str) {
    assert!(
        answer.is_empty()
            || answer.starts_with(&format!("HTTP/1.1 {status}"))
                && answer.contains(&format!("\"{code}\"")),
        "{answer}"
    );
}

/// Waits until a new connection is served again.
async fn served_again(server: &TestServer) {
    within(WAIT, "a place to come back", async {
        loop {
            let mut stream = TcpStream::connect(server.addr).await.expect("connect");
            stream.write_all(HEALTHZ).await.expect("write");
            if read_to_close(&mut stream).await.starts_with("HTTP/1.1 200") {
                break;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    })
    .await;
}

#[tokio::test]
async fn the_per_ip_connection_cap_refuses_extra_connections() {
    let db = TestDb::new();
    let mut config = test_config(&db);
    config.http.max_connections_per_ip = 3;
    let server = TestServer::start(config).await;
    let (refused, mut held) = hold_until_refused(&server, 3).await;
    assert_refused(&refused, 429, "rate_limited");
    assert!(!held.is_empty());
    // Closing one gives its place back.
    held.pop();
    served_again(&server).await;
    drop(held);
    server.stop().await;
}

#[tokio::test]
async fn the_global_connection_cap_refuses_extra_connections() {
    let db = TestDb::new();
    let mut config = test_config(&db);
    config.http.max_connections = 3;
    let server = TestServer::start(config).await;
    let (refused, mut held) = hold_until_refused(&server, 3).await;
    assert_refused(&refused, 503, "unavailable");
    held.pop();
    served_again(&server).await;
    drop(held);
    server.stop().await;
}

#[tokio::test]
async fn slow_and_idle_connections_are_closed_after_their_timers() {
    let db = TestDb::new();
    let mut config = test_config(&db);
    config.http.header_timeout_ms = 300;
    config.http.keepalive_idle_ms = 300;
    let server = TestServer::start(config).await;
    let cases: [(&str, &[u8]); 3] = [
        (
            "half a request head, then nothing",
            b"GET /healthz HTTP/1.1\r\nHost: te",
        ),
        ("nothing at all", b""),
        (
            "one whole request, then an idle keep-alive",
            b"GET /healthz HTTP/1.1\r\nHost: test\r\n\r\n",
        ),
    ];
    for (what, sent) in cases {
        let mut stream = TcpStream::connect(server.addr).await.expect("connect");
        stream.write_all(sent).await.expect("write");
        let answer = read_to_close(&mut stream).await;
        if sent.ends_with(b"\r\n\r\n") {
            assert!(answer.starts_with("HTTP/1.1 200"), "{what}: {answer}");
        } else {
            assert!(!answer.contains(" 200 "), "{what}: {answer}");
        }
    }
    // The server still serves.
    let (status, _) = server.get("/api/levels").await;
    assert_eq!(status, 200);
    server.stop().await;
}

/// Sends a keep-alive `GET /healthz` on `stream` and reads its whole
/// answer (head and `content-length` body); `None` if the connection closed.
async fn healthz_on(stream: &mut TcpStream) -> Option<String> {
    stream
        .write_all(b"GET /healthz HTTP/1.1\r\nHost: test\r\n\r\n")
        .await
        .ok()?;
    let mut received = Vec::new();
    within(WAIT, "an answer on a kept connection", async {
        let mut buffer = [0u8; 1024];
        loop {
            let text = String::from_utf8_lossy(&received).into_owned();
            if let Some((head, body)) = text.split_once("\r\n\r\n") {
                let length = head
                    .lines()
                    .find_map(|l| {
                        l.to_ascii_lowercase()
                            .strip_prefix("content-length: ")
                            .map(str::to_string)
                    })
                    .and_then(|n| n.trim().parse::<usize>().ok())
                    .unwrap_or(0);
                if body.len() >= length {
                    return Some(text);
                }
            }
            match stream.read(&mut buffer).await {
                Ok(0) | Err(_) => return None,
                Ok(n) => received.extend_from_slice(&buffer[..n]),
            }
        }
    })
    .await
}

#[tokio::test]
async fn keep_alive_idle_has_its_own_timer_apart_from_the_header_timer() {
    // A short idle timer under a long header timer: an idle keep-alive
    // connection is closed by the idle timer; an active one is kept.
    let db = TestDb::new();
    let mut config = test_config(&db);
    config.http.header_timeout_ms = 60_000;
    config.http.keepalive_idle_ms = 300;
    let server = TestServer::start(config).await;
    let mut idle = TcpStream::connect(server.addr).await.expect("connect");
    let answer = healthz_on(&mut idle).await.expect("first answer");
    assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
    let since = std::time::Instant::now();
    let rest = read_to_close(&mut idle).await;
    assert_eq!(rest, "", "closed without another answer");
    println!(
        "idle keep-alive (idle 300 ms, header 60 s) closed after {} ms",
        since.elapsed().as_millis()
    );
    let mut active = TcpStream::connect(server.addr).await.expect("connect");
    let kept = std::time::Instant::now();
    for round in 0..15 {
        let answer = healthz_on(&mut active).await;
        assert!(
            answer
                .as_deref()
                .is_some_and(|a| a.starts_with("HTTP/1.1 200")),
            "round {round}: {answer:?}"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    println!(
        "active keep-alive (a request every 100 ms) kept {} ms",
        kept.elapsed().as_millis()
    );
    server.stop().await;

    // The other way round: a long idle timer under a short header timer.
    // An idle connection outlives the header timer several times over and
    // still serves its next request.
    let db = TestDb::new();
    let mut config = test_config(&db);
    config.http.header_timeout_ms = 200;
    config.http.keepalive_idle_ms = 60_000;
    let server = TestServer::start(config).await;
    let mut stream = TcpStream::connect(server.addr).await.expect("connect");
    assert!(healthz_on(&mut stream).await.is_some());
    tokio::time::sleep(Duration::from_millis(1_000)).await;
    let again = healthz_on(&mut stream).await;
    assert!(
        again
            .as_deref()
            .is_some_and(|a| a.starts_with("HTTP/1.1 200")),
        "idle 1 s under a 200 ms header timer: {again:?}"
    );
    // The header timer still cuts a trickled head on that server.
    let mut slow = TcpStream::connect(server.addr).await.expect("connect");
    slow.write_all(b"GET /healthz HTTP/1.1\r\nHost: te")
        .await
        .expect("write");
    let answer = read_to_close(&mut slow).await;
    assert!(!answer.contains(" 200 "), "{answer}");
    server.stop().await;
}

fn foreign_create(server: &TestServer, origin: Option<&str>) -> reqwest::RequestBuilder {
    let mut request = server
        .http
        .post(server.url("/api/games"))
        .json(&json!({"white": {"kind": "human"}, "black": {"kind": "human"}}));
    if let Some(origin) = origin {
        request = request.header("origin", origin);
    }
    request
}

#[tokio::test]
async fn cross_site_requests_are_refused_unless_allowed() {
    let db = TestDb::new();
    let mut config = test_config(&db);
    config.http.allowed_origins = vec!["https://chess.example.org".parse().expect("origin")];
    let server = TestServer::start(config).await;
    let own = format!("http://{}", server.addr);
    let cases: [(Option<&str>, u16); 5] = [
        (None, 201),
        (Some(own.as_str()), 201),
        (Some("https://chess.example.org"), 201),
        (Some("https://evil.example"), 403),
        (Some("null"), 403),
    ];
    for (origin, expected) in cases {
        let answer = read(foreign_create(&server, origin).send().await.expect("POST")).await;
        if expected == 403 {
            assert_error(&answer, 403, "forbidden");
        } else {
            assert_eq!(answer.0, expected, "{origin:?}: {}", answer.1);
        }
    }
    // Reading is not state-changing: allowed from anywhere.
    let answer = read(
        server
            .http
            .get(server.url("/api/levels"))
            .header("origin", "https://evil.example")
            .send()
            .await
            .expect("GET"),
    )
    .await;
    assert_eq!(answer.0, 200);

    // The WebSocket handshake is checked the same way.
    let (id, _white, _black) = server.human_game(json!({})).await;
    let socket = |origin: &str| {
        let mut request = server
            .ws_url(&format!("/ws/games/{id}"))
            .into_client_request()
            .expect("request");
        request
            .headers_mut()
            .insert("origin", origin.parse().expect("header"));
        tokio_tungstenite::connect_async(request)
    };
    match socket("https://evil.example").await {
        Err(tokio_tungstenite::tungstenite::Error::Http(response)) => {
            assert_eq!(response.status().as_u16(), 403);
            let body: Value =
                serde_json::from_slice(response.body().as_deref().unwrap_or_default())
                    .expect("JSON error");
            assert_eq!(body["error"]["code"], "forbidden");
        }
        other => panic!("a foreign WebSocket must be refused, got {other:?}"),
    }
    let (mut allowed, _) = socket(&own).await.expect("own origin's WebSocket");
    drop(allowed.close(None).await);
    server.stop().await;
}

#[tokio::test]
async fn shutdown_does_not_wait_for_a_stalled_request() {
    let db = TestDb::new();
    let server = TestServer::start(test_config(&db)).await;
    // A request whose body never comes: its handler waits for it (the body
    // timer is 30 s).
    let mut stalled = TcpStream::connect(server.addr).await.expect("connect");
    stalled
        .write_all(b"POST /api/games HTTP/1.1\r\nHost: test\r\nContent-Length: 100\r\n\r\n{")
        .await
        .expect("write");
    // Let the server start on it.
    let (status, _) = server.get("/api/levels").await;
    assert_eq!(status, 200);
    // TestServer::stop fails the test unless the server stops within WAIT.
    server.stop().await;
    let answer = read_to_close(&mut stalled).await;
    assert!(!answer.contains(" 201 "), "{answer}");
}

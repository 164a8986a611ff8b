//! Operations (issue 25): readiness that tells a working node from one
//! whose database cannot take a write.

mod support;

use serde_json::json;
use support::*;

#[tokio::test]
async fn readiness_follows_the_database_write_path() {
    let db = TestDb::new_sqlite();
    let mut config = test_config(&db);
    config.db_busy_timeout_ms = 100;
    let server = TestServer::start(config).await;
    assert_eq!(
        server.get("/readyz").await,
        (200, json!({"status": "ready"}))
    );
    assert_eq!(server.get_text("/healthz").await.0, 200);

    // Another process holds the database's write lock: not ready (and
    // still alive), with the reason.
    let lock = Lock::take(&db).await;
    let (status, answer) = server.get("/readyz").await;
    assert_eq!(status, 503, "{answer}");
    assert_eq!(answer["status"], "not ready");
    let reason = answer["reasons"][0].as_str().expect("a reason");
    assert!(reason.starts_with("database"), "{reason}");
    assert_eq!(
        server.get_text("/healthz").await.0,
        200,
        "alive all the same"
    );
    lock.release().await;
    assert_eq!(
        server.get("/readyz").await,
        (200, json!({"status": "ready"}))
    );
    server.stop().await;
}

/// `/metrics` is Prometheus's text format (checked by Prometheus's own
/// `promtool`, from Debian's `prometheus` package, which scripts/test.sh
/// installs) and counts what happened.
#[tokio::test]
async fn metrics_scrape_passes_promtool_and_counts_what_happened() {
    let db = TestDb::new();
    let mut config = test_config(&db);
    config.admin_token = Some(rookery_server::config::AdminToken("metrics-secret".into()));
    let server = TestServer::start(config).await;
    let (id, white, black) = server.human_game(json!({})).await;
    let mut watcher = WsClient::connect(&server, &id, None).await;
    watcher.next_state().await;
    server.play(&id, &white, "e2e4").await;
    server.play(&id, &black, "e7e5").await;
    assert_eq!(server.get("/api/games/not-a-game").await.0, 404);

    // Behind the admin token.
    assert_error(&server.get("/metrics").await, 401, "unauthorized");
    let response = server
        .http
        .get(server.url("/metrics"))
        .bearer_auth("metrics-secret")
        .send()
        .await
        .expect("scrape");
    assert_eq!(response.status().as_u16(), 200);
    assert!(response.headers()["content-type"]
        .to_str()
        .unwrap()
        .starts_with("text/plain"));
    let text = response.text().await.expect("body");
    for name in [
        "rookery_http_requests_total",
        "rookery_http_request_duration_seconds_bucket",
        "rookery_websockets",
        "rookery_live_games",
        "rookery_move_broadcast_seconds_bucket",
        "rookery_db_commit_seconds_bucket",
        "rookery_db_batch_writes_bucket",
        "rookery_games_in_memory",
        "rookery_ai_queue",
        "rookery_db_transactions_total",
    ] {
        assert!(text.contains(name), "{name} missing from:\n{text}");
    }
    assert!(
        text.contains(r#"route="/api/games/{id}/move""#),
        "requests are counted by route template, not path:\n{text}"
    );
    assert!(!text.contains(&id), "no game id in a label");

    let promtool = std::process::Command::new("promtool")
        .args(["check", "metrics"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn();
    let mut promtool = promtool.expect(
        "promtool (Debian's prometheus package; ./scripts/test.sh installs it) must be on PATH",
    );
    {
        use std::io::Write;
        let mut stdin = promtool.stdin.take().expect("stdin");
        stdin.write_all(text.as_bytes()).expect("write to promtool");
    }
    let checked = promtool.wait_with_output().expect("promtool");
    assert!(
        checked.status.success(),
        "promtool check metrics: {}{}",
        String::from_utf8_lossy(&checked.stdout),
        String::from_utf8_lossy(&checked.stderr)
    );
    server.stop().await;
}

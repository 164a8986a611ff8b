//! Operations (issue 25): readiness that tells a working node from one
//! whose database cannot take a write.

mod support;

use serde_json::json;
use support::*;

#[tokio::test]
async fn readiness_follows_the_database_write_path() {
    let db = TestDb::new_sqlite();
    let mut config = test_config(&db);
    config.storage.db_busy_timeout_ms = 100;
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
    config.ops.admin_token = Some(rookery_server::config::AdminToken(
        "metrics-secret-0123456789".into(),
    ));
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
        .bearer_auth("metrics-secret-0123456789")
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

/// `rookery-server backup` copies the live database while moves are being
/// played; the copy, opened by a new server, has every move acknowledged
/// before the backup began.
#[tokio::test]
async fn a_backup_under_write_load_restores_every_acknowledged_move() {
    let db = TestDb::new_sqlite();
    let server = TestServer::start(test_config(&db)).await;
    // Several games whose moves keep coming while the backup runs.
    let line = long_line(100);
    let mut games = Vec::new();
    for _ in 0..4 {
        games.push(server.human_game(json!({})).await);
    }
    let acknowledged = std::sync::Arc::new(std::sync::Mutex::new(vec![0usize; games.len()]));
    let (stop_tx, stop_rx) = tokio::sync::watch::channel(false);
    let mut players = Vec::new();
    for (index, (id, white, black)) in games.iter().cloned().enumerate() {
        let http = server.http.clone();
        let base = server.url("");
        let line = line.clone();
        let acknowledged = acknowledged.clone();
        let stop = stop_rx.clone();
        players.push(tokio::spawn(async move {
            for (ply, uci) in line.iter().enumerate() {
                if *stop.borrow() {
                    break;
                }
                let token = if ply % 2 == 0 { &white } else { &black };
                let response = http
                    .post(format!("{base}/api/games/{id}/move"))
                    .bearer_auth(token)
                    .json(&json!({ "uci": uci }))
                    .send()
                    .await
                    .expect("move");
                assert_eq!(response.status().as_u16(), 200);
                acknowledged.lock().unwrap()[index] = ply + 1;
            }
        }));
    }
    tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    let before: Vec<usize> = acknowledged.lock().unwrap().clone();
    let copy = db.path().with_file_name("backup.db");
    let output = server_binary(&[
        "backup",
        "--database",
        &db.url(),
        "--to",
        copy.to_str().unwrap(),
    ])
    .output()
    .await
    .expect("rookery-server backup");
    assert!(
        output.status.success(),
        "backup failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(String::from_utf8_lossy(&output.stdout).contains("backed up"));
    stop_tx.send(true).unwrap();
    for player in players {
        player.await.unwrap();
    }
    server.stop().await;

    // A second backup never overwrites the first.
    let again = server_binary(&[
        "backup",
        "--database",
        &db.url(),
        "--to",
        copy.to_str().unwrap(),
    ])
    .output()
    .await
    .expect("rookery-server backup");
    assert!(!again.status.success());

    // Restored (the copy put in a database's place): a server on it has
    // every move acknowledged before the backup began.
    let restored = TestDb::new_sqlite();
    std::fs::copy(&copy, restored.path()).expect("restore the copy");
    let server = TestServer::start(test_config(&restored)).await;
    for ((id, _, _), acked) in games.iter().zip(&before) {
        let state = server.state(id).await;
        let moves = moves(&state);
        assert!(
            moves.len() >= *acked,
            "game {id}: {} moves in the copy, {acked} acknowledged before the backup",
            moves.len()
        );
        assert_eq!(moves[..], line[..moves.len()]);
    }
    println!("backup under load: acknowledged before {before:?}");
    server.stop().await;
}

/// `--metrics-addr` serves `/metrics` with no token on its own address,
/// while the main listener keeps it behind `--admin-token`.
#[tokio::test]
async fn metrics_on_their_own_address() {
    let dir = tempfile::tempdir().expect("temporary directory");
    let free = std::net::TcpListener::bind("127.0.0.1:0").expect("a free port");
    let metrics_addr = free.local_addr().expect("address").to_string();
    drop(free);
    let db = dir.path().join("rookery.db");
    let mut child = server_binary(&[
        "--addr",
        "127.0.0.1:0",
        "--database",
        db.to_str().unwrap(),
        "--admin-token",
        "s3cret-admin-token-0123",
        "--metrics-addr",
        &metrics_addr,
    ])
    .spawn()
    .expect("rookery-server");
    let base = listening_base(&mut child).await;
    let http = reqwest::Client::new();
    let main = http
        .get(format!("{base}/metrics"))
        .send()
        .await
        .expect("scrape");
    assert_eq!(main.status().as_u16(), 401);
    let own = http
        .get(format!("http://{metrics_addr}/metrics"))
        .send()
        .await
        .expect("scrape");
    assert_eq!(own.status().as_u16(), 200);
    assert!(own
        .text()
        .await
        .unwrap()
        .contains("rookery_games_in_memory"));
    let other = http
        .get(format!("http://{metrics_addr}/api/scoreboard"))
        .send()
        .await
        .expect("GET");
    assert_eq!(other.status().as_u16(), 404, "only /metrics there");
    sigterm(&child);
    exits_zero(child, "the server").await;
}

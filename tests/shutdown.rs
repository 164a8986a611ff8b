//! SIGTERM during start-up (before the `listening on` line, and while games
//! resume in the background): the process exits 0. SIGTERM with stalled
//! clients is a case of `adversarial.rs`.

mod support;

use std::time::Duration;

use serde_json::{json, Value};
use support::*;

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
    let server = SpawnedServer::start(&db.path(), &[]).await;
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
    let server = SpawnedServer::start(&db.path(), &[]).await;
    sigterm(&server.child);
    exits_zero(server.child, "SIGTERM while resuming").await;

    // Before the `listening on` line: the database is still opening.
    let child = server_command(&db.path(), &[]).spawn().expect("start");
    tokio::time::sleep(Duration::from_millis(30)).await;
    sigterm(&child);
    exits_zero(child, "SIGTERM during start-up").await;
}

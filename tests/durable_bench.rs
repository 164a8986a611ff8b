//! Durable moves per second, with and without group commit, side by side in
//! one run. Not a test of correctness (that is tests/sigkill_soak.rs and the
//! store's unit tests): a benchmark, ignored by default.
//!
//! `cargo test --release -p rookery-server --test durable_bench -- --ignored
//! --nocapture` (env `ROOKERY_BENCH_GAMES`, default 200 games moving at
//! once; `ROOKERY_BENCH_SECS`, default 10 s per run).
//!
//! Each game is a human v human game on a server in this process with a
//! database file; one client task per game plays legal moves (chosen from
//! the acknowledged state; a fresh game when one ends) over HTTP as fast as
//! the server acknowledges. Only moves are counted, and only the time after
//! every game was created. Every acknowledged move was committed with
//! `synchronous = FULL`.
//! `--max-write-batch 1` is one transaction and one fsync per move, as
//! before group commit.
//!
//! Measured 2026-11-23 on the shared 2-core build machine (load average
//! about 6, client and server in one process), release, 200 games, 10 s
//! each: 868 moves/s one commit per move, 2,855 moves/s group commit (3.3x).
//! Debug build: 159 and 688 moves/s (4.3x).

mod support;

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::json;
use support::*;

async fn run(max_batch: usize, games: usize, seconds: u64) -> (f64, f64) {
    let db = TestDb::new();
    let mut config = test_config(&db);
    config.storage.max_write_batch = max_batch;
    config.http.rate_limit = 1e9;
    config.http.rate_burst = u32::MAX;
    let server = TestServer::start(config).await;
    let acknowledged = Arc::new(AtomicU64::new(0));
    let mut created = Vec::new();
    for _ in 0..games {
        created.push(server.human_game(json!({})).await);
    }
    let deadline = Instant::now() + Duration::from_secs(seconds);
    let mut clients = Vec::new();
    for (mut id, mut white, mut black) in created {
        let http = reqwest::Client::new();
        let base = server.url("");
        let acknowledged = acknowledged.clone();
        let server_for_new = (server.url("/api/games"), http.clone());
        clients.push(tokio::spawn(async move {
            let mut ply = 0usize;
            let mut next = "e2e4".to_string();
            while Instant::now() < deadline {
                let token = if ply % 2 == 0 { &white } else { &black };
                let response = http
                    .post(format!("{base}/api/games/{id}/move"))
                    .bearer_auth(token)
                    .json(&json!({ "uci": next }))
                    .send()
                    .await
                    .expect("move");
                let status = response.status().as_u16();
                let state: serde_json::Value = response.json().await.expect("state");
                if status == 200 {
                    acknowledged.fetch_add(1, Ordering::Relaxed);
                    ply += 1;
                    if state["status"] != "finished" {
                        let legal = state["legal_moves"].as_array().expect("legal moves");
                        next = legal[ply * 7 % legal.len()].as_str().expect("uci").into();
                        continue;
                    }
                } else {
                    panic!("move: {status} {state}");
                }
                // The repetition ended the game: a new one.
                let (url, http) = &server_for_new;
                let created: serde_json::Value = http
                    .post(url)
                    .json(&json!({"white": {"kind": "human"}, "black": {"kind": "human"}}))
                    .send()
                    .await
                    .expect("create")
                    .json()
                    .await
                    .expect("created");
                id = created["game"]["id"].as_str().expect("id").to_string();
                white = created["seat"]["token"]
                    .as_str()
                    .expect("token")
                    .to_string();
                let joined: serde_json::Value = http
                    .post(format!("{url}/{id}/join"))
                    .send()
                    .await
                    .expect("join")
                    .json()
                    .await
                    .expect("joined");
                black = joined["seat"]["token"].as_str().expect("token").to_string();
                ply = 0;
                next = "e2e4".into();
            }
        }));
    }
    let started = Instant::now();
    for client in clients {
        client.await.expect("client");
    }
    let elapsed = started.elapsed().as_secs_f64();
    let moves = acknowledged.load(Ordering::Relaxed) as f64;
    server.stop().await;
    (moves / elapsed, moves)
}

#[tokio::test(flavor = "multi_thread")]
#[ignore = "benchmark: run in release with --ignored --nocapture"]
async fn durable_moves_per_second() {
    let games = std::env::var("ROOKERY_BENCH_GAMES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(200);
    let seconds = std::env::var("ROOKERY_BENCH_SECS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(10);
    let (single, single_moves) = run(1, games, seconds).await;
    let (grouped, grouped_moves) = run(256, games, seconds).await;
    println!("durable moves/s, {games} games moving at once, {seconds} s each, synchronous=FULL:");
    println!("  --max-write-batch 1   (one commit per move): {single:8.0} moves/s ({single_moves} moves)");
    println!("  --max-write-batch 256 (group commit)       : {grouped:8.0} moves/s ({grouped_moves} moves)");
    println!("  speed-up: {:.1}x", grouped / single);
}

//! A quick load measurement on loopback, not a test: it prints numbers and
//! asserts only correctness. Run it in release mode:
//!
//!     cargo test --release -p rookery-server --test load -- --ignored --nocapture
//!
//! - moves/s: many games at once, each move a durable (fsynced) HTTP request;
//! - WebSocket fan-out: how long one move takes to reach every spectator.

mod support;

use std::time::Instant;

use serde_json::json;
use support::*;

const LINE: [&str; 16] = [
    "e2e4", "e7e5", "g1f3", "b8c6", "f1b5", "a7a6", "b5a4", "g8f6", "e1g1", "f8e7", "f1e1", "b7b5",
    "a4b3", "d7d6", "c2c3", "e8g8",
];

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "a measurement: run explicitly in release mode"]
async fn measure_moves_per_second_and_fan_out() {
    let db = TestDb::new();
    let server = TestServer::start(test_config(&db)).await;

    // Moves per second: 32 games, each driven by its own client.
    let games = 32;
    let mut seated = Vec::new();
    for _ in 0..games {
        seated.push(server.human_game(json!({})).await);
    }
    let started = Instant::now();
    let mut tasks = Vec::new();
    for (id, white, black) in seated {
        let base = server.url("");
        tasks.push(tokio::spawn(async move {
            let http = reqwest::Client::new();
            for (ply, uci) in LINE.iter().enumerate() {
                let token = if ply % 2 == 0 { &white } else { &black };
                let response = http
                    .post(format!("{base}/api/games/{id}/move"))
                    .bearer_auth(token)
                    .json(&json!({ "uci": uci }))
                    .send()
                    .await
                    .expect("move");
                assert_eq!(response.status().as_u16(), 200);
            }
        }));
    }
    for task in tasks {
        task.await.unwrap();
    }
    let elapsed = started.elapsed();
    let total = games * LINE.len();
    println!(
        "moves: {total} durable HTTP moves in {:.2} s = {:.0} moves/s ({games} games at once)",
        elapsed.as_secs_f64(),
        total as f64 / elapsed.as_secs_f64()
    );

    // Fan-out: 500 spectators on one game.
    let (id, white, black) = server.human_game(json!({})).await;
    let mut watchers = Vec::new();
    for _ in 0..500 {
        let mut ws = WsClient::connect(&server, &id, None).await;
        ws.next_state().await;
        watchers.push(ws);
    }
    // Drain the spectator-count updates the later connections caused (the
    // last one saw 500 in its first state).
    for ws in &mut watchers[..499] {
        ws.state_where("the last count", |s| s["spectators"] == 500)
            .await;
    }
    for (ply, uci) in LINE[..6].iter().enumerate() {
        let token = if ply % 2 == 0 { &white } else { &black };
        let started = Instant::now();
        server.play(&id, token, uci).await;
        for ws in &mut watchers {
            ws.state_where("the move", |s| moves(s).len() == ply + 1)
                .await;
        }
        println!(
            "fan-out: move {} reached 500 spectators in {:.1} ms (move request included)",
            ply + 1,
            started.elapsed().as_secs_f64() * 1000.0
        );
    }
    server.stop().await;
}

/// Round-trip times of the human moves of `rounds` games (the opening line
/// above in each), in milliseconds, sorted.
async fn human_move_latencies(server: &TestServer, rounds: usize) -> Vec<f64> {
    let mut latencies = Vec::new();
    for _ in 0..rounds {
        let (id, white, black) = server.human_game(json!({})).await;
        for (ply, uci) in LINE.iter().enumerate() {
            let token = if ply % 2 == 0 { &white } else { &black };
            let started = Instant::now();
            server.play(&id, token, uci).await;
            latencies.push(started.elapsed().as_secs_f64() * 1000.0);
        }
    }
    latencies.sort_by(f64::total_cmp);
    latencies
}

/// CPU time this process has used (Linux: /proc/self/stat, 100 ticks/s).
fn cpu_seconds() -> f64 {
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
    let fields: Vec<&str> = stat
        .rsplit_once(')')
        .map(|(_, rest)| rest.split_whitespace().collect())
        .unwrap_or_default();
    let ticks = |i: usize| {
        fields
            .get(i)
            .and_then(|f| f.parse::<f64>().ok())
            .unwrap_or(0.0)
    };
    // utime and stime are fields 14 and 15, i.e. 11 and 12 after the name.
    (ticks(11) + ticks(12)) / 100.0
}

fn summary(latencies: &[f64]) -> String {
    let at = |q: f64| latencies[((latencies.len() - 1) as f64 * q) as usize];
    format!(
        "n={} p50={:.1} ms p90={:.1} ms max={:.1} ms",
        latencies.len(),
        at(0.5),
        at(0.9),
        at(1.0)
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "a measurement: run explicitly in release mode"]
async fn measure_human_moves_while_every_core_thinks() {
    let db = TestDb::new();
    let server = TestServer::start(test_config(&db)).await;
    let idle = human_move_latencies(&server, 3).await;
    println!("human moves, AI idle:             {}", summary(&idle));
    // Full-strength AI v AI games, more than there are cores: every search
    // permit is taken for the whole measurement.
    for _ in 0..4 {
        server
            .create_game(
                json!({"white": {"kind": "ai", "level": 8}, "black": {"kind": "ai", "level": 8}}),
                None,
            )
            .await;
    }
    tokio::time::sleep(std::time::Duration::from_millis(500)).await;
    let (cpu_before, wall) = (cpu_seconds(), Instant::now());
    let busy = human_move_latencies(&server, 20).await;
    let cores_busy = (cpu_seconds() - cpu_before) / wall.elapsed().as_secs_f64();
    println!("human moves, every core thinking: {}", summary(&busy));
    println!("meanwhile this process used {cores_busy:.2} cores on average");
    let (_, games) = server.get("/api/games?status=active&limit=100").await;
    let ai_moves: usize = games["games"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|g| g["white"]["kind"] == "ai")
        .map(|g| moves(g).len())
        .sum();
    println!("AI moves made meanwhile: {ai_moves}");
    server.stop().await;
}

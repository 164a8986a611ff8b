//! A load probe, not run by default (`cargo test -p rookery-server --test
//! arena_load -- --ignored --nocapture`): 200 accounts in one arena with
//! the default wave (1 s), each game played two plies then resigned at
//! once, for 60 s. It prints the time from a game's end to the same
//! player's next pairing (p50, p99, from the games' own timestamps) and
//! the process's CPU time (server and driver share the process; the
//! driver's part is small). Figures go to docs/performance.md.

mod support;

use std::collections::{HashMap, HashSet};
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::{json, Value};
use support::*;

const PLAYERS: usize = 200;

fn cpu_seconds() -> f64 {
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
    let fields: Vec<&str> = stat
        .rsplit(')')
        .next()
        .unwrap_or("")
        .split_whitespace()
        .collect();
    let ticks = |i: usize| {
        fields
            .get(i)
            .and_then(|f| f.parse::<f64>().ok())
            .unwrap_or(0.0)
    };
    (ticks(11) + ticks(12)) / 100.0
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "a load probe: run by hand"]
async fn two_hundred_players_in_one_arena() {
    let db = TestDb::new();
    let mut config = test_config(&db);
    config.http.rate_limit = 1_000_000.0;
    config.http.rate_burst = 1_000_000;
    let server = Arc::new(TestServer::start(config).await);
    let mut tokens: HashMap<String, String> = HashMap::new();
    for i in 0..PLAYERS {
        let name = format!("p{i}");
        tokens.insert(name.clone(), server.register(&name).await);
    }
    let host = tokens["p0"].clone();
    let (status, arena) = server
        .post(
            "/api/tournament",
            Some(&host),
            Some(json!({"name": "Load", "clockTime": 3, "clockIncrement": 0,
                        "minutes": 1, "waitMinutes": 0.2})),
        )
        .await;
    assert_eq!(status, 200, "{arena}");
    let id = arena["id"].as_str().unwrap().to_string();
    for token in tokens.values() {
        let (status, _) = server
            .post(&format!("/api/tournament/{id}/join"), Some(token), None)
            .await;
        assert_eq!(status, 200);
    }
    let cpu_before = cpu_seconds();
    let started = Instant::now();
    let mut handled: HashSet<String> = HashSet::new();
    loop {
        let (_, arena) = server.get(&format!("/api/tournament/{id}")).await;
        if arena["isFinished"] == true && arena["duels"].as_array().is_none_or(Vec::is_empty) {
            break;
        }
        for duel in arena["duels"].as_array().cloned().unwrap_or_default() {
            let game = duel["id"].as_str().unwrap().to_string();
            if !handled.insert(game.clone()) {
                continue;
            }
            let white = tokens[duel["p"][0]["n"].as_str().unwrap()].clone();
            let black = tokens[duel["p"][1]["n"].as_str().unwrap()].clone();
            let server = server.clone();
            tokio::spawn(async move {
                let at = |tail: &str| format!("/api/board/game/{game}/{tail}");
                server.post(&at("move/e2e4"), Some(&white), None).await;
                server.post(&at("move/e7e5"), Some(&black), None).await;
                server.post(&at("resign"), Some(&black), None).await;
            });
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
        assert!(
            started.elapsed() < Duration::from_secs(300),
            "the arena did not end"
        );
    }
    let cpu = cpu_seconds() - cpu_before;
    let wall = started.elapsed().as_secs_f64();
    let response = server
        .http
        .get(server.url(&format!("/api/tournament/{id}/games")))
        .header("accept", "application/x-ndjson")
        .send()
        .await
        .unwrap();
    let text = response.text().await.unwrap();
    let games: Vec<Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let mut by_player: HashMap<String, Vec<(i64, i64)>> = HashMap::new();
    for game in &games {
        let times = (
            game["createdAt"].as_i64().unwrap(),
            game["lastMoveAt"].as_i64().unwrap(),
        );
        for side in ["white", "black"] {
            let name = game["players"][side]["user"]["name"]
                .as_str()
                .unwrap()
                .to_string();
            by_player.entry(name).or_default().push(times);
        }
    }
    let mut gaps: Vec<i64> = Vec::new();
    for games in by_player.values_mut() {
        games.sort_unstable();
        for pair in games.windows(2) {
            gaps.push(pair[1].0 - pair[0].1);
        }
    }
    gaps.sort_unstable();
    let pick = |q: f64| gaps[((gaps.len() as f64 - 1.0) * q).round() as usize];
    println!(
        "{PLAYERS} players, {} games in {wall:.0} s; end of a game to the next pairing: \
         p50 {} ms, p99 {} ms, max {} ms; process CPU {cpu:.1} s ({:.0}% of one core)",
        games.len(),
        pick(0.5),
        pick(0.99),
        gaps.last().copied().unwrap_or(0),
        100.0 * cpu / wall
    );
}

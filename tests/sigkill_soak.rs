//! The SIGKILL loop: clients play games through the API against the real
//! binary, the server is killed with SIGKILL at random moments and
//! restarted, and every time every acknowledged state must be stored (its
//! moves a prefix of what the restarted server shows) and every game must
//! go on.
//!
//! The default run kills the server 10 times (CI). The long run is ignored:
//! `ROOKERY_SOAK_KILLS=200 cargo test --release -p rookery-server --test
//! sigkill_soak -- --ignored --nocapture`.

mod support;

use std::path::Path;
use std::time::Duration;

use serde_json::{json, Value};
use support::*;
use tokio::process::Child;

/// A small random generator (xorshift), seeded per run; the seed is printed
/// so a failing run can be repeated with `ROOKERY_SOAK_SEED`.
struct Random(u64);

impl Random {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }
}

struct Server {
    child: Child,
    base: String,
}

impl Server {
    async fn start(db: &Path) -> Server {
        let mut child = server_command(db, &[])
            .spawn()
            .expect("start rookery-server");
        let base = listening_base(&mut child).await;
        Server { child, base }
    }

    async fn kill(mut self) {
        self.child.start_kill().expect("SIGKILL");
        within(WAIT, "the killed server to exit", self.child.wait())
            .await
            .expect("wait");
    }

    async fn terminate(mut self) {
        let pid = self.child.id().expect("running") as i32;
        // SAFETY: kill(2) on our own child's pid with a valid signal.
        assert_eq!(unsafe { libc::kill(pid, libc::SIGTERM) }, 0);
        let status = within(WAIT, "the server to exit", self.child.wait())
            .await
            .expect("wait");
        assert_eq!(status.code(), Some(0));
    }
}

/// One game a client plays, and the last state the server acknowledged.
#[derive(Debug, Clone)]
struct Played {
    id: String,
    /// Seat tokens: (white, black); `None` for an AI seat.
    tokens: [Option<String>; 2],
    acknowledged: Value,
}

fn http() -> reqwest::Client {
    reqwest::Client::builder()
        .timeout(Duration::from_secs(5))
        .build()
        .expect("HTTP client")
}

async fn post(
    http: &reqwest::Client,
    url: String,
    token: Option<&str>,
    body: Value,
) -> Option<(u16, Value)> {
    let mut request = http.post(url).json(&body);
    if let Some(token) = token {
        request = request.bearer_auth(token);
    }
    let response = request.send().await.ok()?;
    let status = response.status().as_u16();
    // The whole body is the acknowledgement; a cut body is none.
    let body = response.bytes().await.ok()?;
    Some((status, serde_json::from_slice(&body).ok()?))
}

/// Creates a game of kind `kind` (0: timed human v human, 1: untimed human v
/// human, 2: timed human v AI level 1). `None` if the server died.
async fn new_game(http: &reqwest::Client, base: &str, kind: u64) -> Option<Played> {
    let body = match kind {
        0 => json!({"white": {"kind": "human"}, "black": {"kind": "human"},
                    "clock": {"initial": 900, "increment": 1}}),
        1 => json!({"white": {"kind": "human"}, "black": {"kind": "human"}}),
        _ => json!({"white": {"kind": "human"}, "black": {"kind": "ai", "level": 1},
                    "clock": {"initial": 900, "increment": 0}}),
    };
    let (status, created) = post(http, format!("{base}/api/games"), None, body).await?;
    assert_eq!(status, 201, "{created}");
    let id = created["game"]["id"].as_str()?.to_string();
    let white = created["seat"]["token"].as_str()?.to_string();
    let mut acknowledged = created["game"].clone();
    let black = if kind == 2 {
        None
    } else {
        let (status, joined) =
            post(http, format!("{base}/api/games/{id}/join"), None, json!({})).await?;
        assert_eq!(status, 200, "{joined}");
        acknowledged = joined["game"].clone();
        Some(joined["seat"]["token"].as_str()?.to_string())
    };
    Some(Played {
        id,
        tokens: [Some(white), black],
        acknowledged,
    })
}

/// Plays `game` (and new games once it is over) until the server dies;
/// returns every game played, each with its last acknowledged state.
async fn client(base: String, mut game: Played, kind: u64, seed: u64) -> Vec<Played> {
    let http = http();
    let mut random = Random(seed | 1);
    let mut done = Vec::new();
    loop {
        let Ok(response) = http
            .get(format!("{base}/api/games/{}", game.id))
            .send()
            .await
        else {
            break;
        };
        let Ok(state) = response.json::<Value>().await else {
            break;
        };
        if state["status"] == "finished" {
            done.push(game.clone());
            match new_game(&http, &base, kind).await {
                Some(next) => game = next,
                None => return done,
            }
            continue;
        }
        let turn = if state["turn"] == "white" { 0 } else { 1 };
        let Some(token) = game.tokens[turn].clone() else {
            // The AI is to move: wait for it.
            tokio::time::sleep(Duration::from_millis(10)).await;
            continue;
        };
        let legal = state["legal_moves"].as_array().cloned().unwrap_or_default();
        let uci = legal[random.below(legal.len() as u64) as usize].clone();
        match post(
            &http,
            format!("{base}/api/games/{}/move", game.id),
            Some(&token),
            json!({ "uci": uci }),
        )
        .await
        {
            Some((200, state)) => game.acknowledged = state,
            Some((status, answer)) => panic!("move {uci} in {}: {status} {answer}", game.id),
            None => break,
        }
    }
    done.push(game);
    done
}

/// Checks every game against the restarted server: the acknowledged moves
/// are a prefix of the stored ones, a finished game stays as acknowledged,
/// and an unfinished one is there to go on.
async fn check(base: &str, games: &[Played]) {
    let http = http();
    for game in games {
        let state: Value = http
            .get(format!("{base}/api/games/{}", game.id))
            .send()
            .await
            .expect("GET after restart")
            .json()
            .await
            .expect("state");
        let stored = moves(&state);
        let acknowledged = moves(&game.acknowledged);
        assert!(
            stored.starts_with(&acknowledged),
            "game {}: stored {stored:?}, acknowledged {acknowledged:?}",
            game.id
        );
        if game.acknowledged["status"] == "finished" {
            assert_eq!(state["status"], "finished", "{}", game.id);
            assert_eq!(stored, acknowledged);
            assert_eq!(state["result"], game.acknowledged["result"]);
        } else {
            assert_ne!(state["status"], "waiting", "{}", game.id);
        }
    }
}

async fn soak(kills: usize) {
    let seed = std::env::var("ROOKERY_SOAK_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| {
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(1, |d| d.as_nanos() as u64)
        });
    println!("SIGKILL soak: {kills} kills, seed {seed}");
    let mut random = Random(seed | 1);
    let db = TestDb::new();
    const CLIENTS: usize = 6;
    // The game each client plays on, and every game played since the last
    // check.
    let mut current: Vec<Played> = Vec::new();
    let mut to_check: Vec<Played> = Vec::new();
    let (mut games, mut checked_moves) = (0usize, 0usize);
    let started = std::time::Instant::now();
    for _ in 0..kills {
        let server = Server::start(&db.path()).await;
        check(&server.base, &to_check).await;
        checked_moves += to_check
            .iter()
            .map(|g| moves(&g.acknowledged).len())
            .sum::<usize>();
        let http = http();
        while current.len() < CLIENTS {
            let kind = current.len() as u64 % 3;
            current.push(new_game(&http, &server.base, kind).await.expect("new game"));
        }
        let clients: Vec<_> = current
            .drain(..)
            .enumerate()
            .map(|(index, game)| {
                tokio::spawn(client(
                    server.base.clone(),
                    game,
                    index as u64 % 3,
                    random.next(),
                ))
            })
            .collect();
        // Kill at a random moment of the play.
        tokio::time::sleep(Duration::from_millis(50 + random.below(500))).await;
        server.kill().await;
        to_check.clear();
        for task in clients {
            let played = within(WAIT, "a client to notice the kill", task)
                .await
                .expect("client task");
            games += played.len();
            // The client's last game goes on next round, if unfinished.
            if let Some(last) = played.last() {
                if last.acknowledged["status"] != "finished" {
                    current.push(last.clone());
                }
            }
            to_check.extend(played);
        }
    }
    // Finally, a clean restart: every game is checked once more, and every
    // unfinished one goes on, the AI's included.
    let server = Server::start(&db.path()).await;
    check(&server.base, &to_check).await;
    let http = http();
    for game in &current {
        let state: Value = http
            .get(format!("{}/api/games/{}", server.base, game.id))
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        if state["status"] != "active" {
            continue;
        }
        let turn = if state["turn"] == "white" { 0 } else { 1 };
        match &game.tokens[turn] {
            Some(token) => {
                let uci = state["legal_moves"][0].clone();
                let (status, answer) = post(
                    &http,
                    format!("{}/api/games/{}/move", server.base, game.id),
                    Some(token),
                    json!({ "uci": uci }),
                )
                .await
                .expect("move after the last restart");
                assert_eq!(status, 200, "{answer}");
            }
            None => {
                let before = moves(&state).len();
                within(WAIT, "the AI to move after the last restart", async {
                    loop {
                        let state: Value = http
                            .get(format!("{}/api/games/{}", server.base, game.id))
                            .send()
                            .await
                            .unwrap()
                            .json()
                            .await
                            .unwrap();
                        if moves(&state).len() > before || state["status"] == "finished" {
                            break;
                        }
                        tokio::time::sleep(Duration::from_millis(20)).await;
                    }
                })
                .await;
            }
        }
    }
    server.terminate().await;
    println!(
        "SIGKILL soak: {kills} kills, {games} game sessions, {checked_moves} acknowledged moves \
         checked after restarts, {:.1} s, seed {seed}",
        started.elapsed().as_secs_f64()
    );
}

#[tokio::test]
async fn sigkill_at_random_moments_loses_no_acknowledged_move() {
    soak(10).await;
}

#[tokio::test]
#[ignore = "long soak: run in release with ROOKERY_SOAK_KILLS (default 200)"]
async fn sigkill_soak_long() {
    let kills = std::env::var("ROOKERY_SOAK_KILLS")
        .ok()
        .and_then(|k| k.parse().ok())
        .unwrap_or(200);
    soak(kills).await;
}

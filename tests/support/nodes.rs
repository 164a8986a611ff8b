//! Two or three `rookery-server` processes sharing the throwaway
//! PostgreSQL and `nats-server` of [`super::cluster`], and the HTTP calls
//! the cluster tests make to them (tests/cluster.rs, tests/gray.rs).

use serde_json::{json, Value};

use super::cluster::{shared_postgres, Proc};
use super::{listening_base, read, within, TestDb, WAIT};

/// The lease time of these tests' nodes (the default is 4 s).
pub const LEASE_MS: u64 = 2_000;

/// A node of the cluster on `db`, reaching NATS at `nats_url`.
pub async fn node(name: &str, db: &TestDb, nats_url: &str) -> (Proc, String) {
    node_with(name, db, nats_url, &[]).await
}

/// [`node`] with `extra` flags.
pub async fn node_with(name: &str, db: &TestDb, nats_url: &str, extra: &[&str]) -> (Proc, String) {
    let database = db.url();
    let lease = LEASE_MS.to_string();
    let mut args = vec![
        "--addr",
        "127.0.0.1:0",
        "--database",
        &database,
        "--nats",
        nats_url,
        "--lease-ms",
        &lease,
    ];
    args.extend_from_slice(extra);
    let mut node = Proc::spawn(name, &args);
    let base = listening_base(&mut node.child).await;
    (node, base)
}

pub async fn post(base: &str, path: &str, token: Option<&str>, body: Value) -> (u16, Value) {
    let mut request = reqwest::Client::new()
        .post(format!("{base}{path}"))
        .json(&body);
    if let Some(token) = token {
        request = request.bearer_auth(token);
    }
    read(request.send().await.expect("POST")).await
}

pub async fn get(base: &str, path: &str) -> (u16, Value) {
    read(reqwest::get(format!("{base}{path}")).await.expect("GET")).await
}

/// A timed human v human game created on `creator` and joined on `joiner`:
/// (id, white token, black token).
pub async fn timed_game(creator: &str, joiner: &str) -> (String, String, String) {
    let (status, created) = post(
        creator,
        "/api/games",
        None,
        json!({"white": {"kind": "human"}, "black": {"kind": "human"},
               "clock": {"initial": 600, "increment": 0}}),
    )
    .await;
    assert_eq!(status, 201, "create: {created}");
    let id = created["game"]["id"].as_str().expect("id").to_string();
    let white = created["seat"]["token"]
        .as_str()
        .expect("white")
        .to_string();
    let (status, joined) = post(joiner, &format!("/api/games/{id}/join"), None, json!({})).await;
    assert_eq!(status, 200, "join on another node: {joined}");
    let black = joined["seat"]["token"].as_str().expect("black").to_string();
    (id, white, black)
}

pub async fn play(base: &str, id: &str, token: &str, uci: &str) -> (u16, Value) {
    post(
        base,
        &format!("/api/games/{id}/move"),
        Some(token),
        json!({ "uci": uci }),
    )
    .await
}

/// Sends move `uci` to `base` until it is accepted, as a client does while
/// a game changes owner: every answer before the 200 must be 503
/// `unavailable` (the game is moving), never a refusal.
pub async fn play_until_accepted(base: &str, id: &str, token: &str, uci: &str) -> (u16, Value) {
    within(WAIT, "the move after the owner stopped answering", async {
        loop {
            let answer = play(base, id, token, uci).await;
            if answer.0 == 200 {
                return answer;
            }
            assert_eq!(
                answer.0, 503,
                "only unavailable while the game moves: {}",
                answer.1
            );
            tokio::time::sleep(std::time::Duration::from_millis(100)).await;
        }
    })
    .await
}

/// The lease row of `id`: owner and epoch.
pub fn lease(db: &TestDb, id: &str) -> (String, i64) {
    let database = db.postgres_database().expect("a PostgreSQL test");
    let row = shared_postgres().query(
        database,
        &format!("SELECT owner || ' ' || epoch FROM game_leases WHERE game_id = '{id}'"),
    );
    let (owner, epoch) = row
        .split_once(' ')
        .unwrap_or_else(|| panic!("lease {row:?}"));
    (owner.to_string(), epoch.parse().expect("epoch"))
}

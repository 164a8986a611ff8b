//! The AI is bounded: a search that keeps failing ends its game instead of
//! hanging it, and AI v AI games are capped (and can be stopped by an
//! operator), restarts included. That a human's opponent is not stuck
//! behind AI v AI searches (the AI flood) is in `adversarial.rs`.

mod support;

use std::sync::Arc;
use std::time::Duration;

use rookery_server::ai::{AiScheduler, SearchFn};
use rookery_server::live::game::LiveGame;
use rookery_server::live::Registry;
use rookery_server::protocol::{SeatKind, Side};
use rookery_server::store::Store;
use rookery_server::token::TokenHash;
use serde_json::{json, Value};
use support::*;
use tokio::time::Instant;
use uuid::Uuid;

/// A search that always panics.
fn broken_search() -> SearchFn {
    Arc::new(|_request, _budget, _stop| panic!("injected search failure"))
}

#[tokio::test]
async fn a_search_that_keeps_failing_aborts_its_game() {
    let db = TestDb::new();
    let store = Store::open(&db.url()).await.expect("store");
    let scheduler = AiScheduler::with_search(1, Duration::ZERO, broken_search());
    let registry = Registry::new(store.clone(), scheduler, Default::default());
    // The AI has white, so it must move first; the human holds black.
    let mut live = LiveGame::new(
        Uuid::new_v4(),
        0,
        [SeatKind::Ai { level: 1 }, SeatKind::Human],
        None,
        None,
    )
    .expect("game");
    live.take_seat(Side::Black, TokenHash::of("black"), None, Instant::now())
        .expect("seat");
    store.insert_game(&live).await.expect("stored");
    let id = live.id;
    registry.insert(live).await.expect("live");
    let state = within(WAIT, "the game to end", async {
        loop {
            let state = registry.state(id).await.expect("state");
            if state.is_finished() {
                return state;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    })
    .await;
    let state = serde_json::to_value(&state).expect("JSON");
    assert_eq!(state["termination"], "aborted", "{state}");
    assert_eq!(state["result"], Value::Null, "{state}");
    assert_eq!(state["moves"], json!([]), "{state}");
    // It is recorded: the database says the same.
    let stored = store
        .load_game(id, Instant::now())
        .await
        .expect("load")
        .expect("stored game");
    assert!(stored.is_finished());
    registry.shutdown().await;
    store.close().await;
}

const ADMIN: &str = "operator-secret-0123456789";

/// Creates an AI v AI game claiming, through the trusted proxy, to come
/// from `client`.
async fn create_show(server: &TestServer, client: &str) -> (u16, Value) {
    let response = server
        .http
        .post(server.url("/api/games"))
        .header("x-forwarded-for", client)
        .json(&json!({"white": {"kind": "ai", "level": 1}, "black": {"kind": "ai", "level": 1}}))
        .send()
        .await
        .expect("POST");
    read(response).await
}

async fn delete_game(server: &TestServer, id: &str, token: Option<&str>) -> (u16, Value) {
    let mut request = server.http.delete(server.url(&format!("/api/games/{id}")));
    if let Some(token) = token {
        request = request.bearer_auth(token);
    }
    read(request.send().await.expect("DELETE")).await
}

/// At most `total` AI v AI games, 2 per client (read from a trusted
/// proxy's header), an admin token, and AI moves too slow to end a game.
fn capped(db: &TestDb, total: usize) -> rookery_server::Config {
    let mut config = test_config(db);
    config.ai.max_ai_games = Some(total);
    config.ai.max_ai_games_per_client = 2;
    config.ops.admin_token = Some(ADMIN.parse().expect("token"));
    config.http.trusted_proxies = vec!["127.0.0.1".parse().expect("range")];
    // One move a minute: no game ends by itself during the test.
    config.ai.ai_move_delay_ms = 60_000;
    config
}

#[tokio::test]
async fn ai_v_ai_games_are_capped_and_operators_can_stop_one() {
    let db = TestDb::new();
    let server = TestServer::start(capped(&db, 3)).await;

    let first = create_show(&server, "198.51.100.1").await;
    assert_eq!(first.0, 201, "{}", first.1);
    assert_eq!(create_show(&server, "198.51.100.1").await.0, 201);
    // The client's cap.
    let answer = create_show(&server, "198.51.100.1").await;
    assert_error(&answer, 429, "rate_limited");
    assert!(answer.1["error"]["message"]
        .as_str()
        .unwrap_or("")
        .contains("per client"));
    // Another client, until the server's cap.
    assert_eq!(create_show(&server, "198.51.100.2").await.0, 201);
    let answer = create_show(&server, "198.51.100.3").await;
    assert_error(&answer, 429, "rate_limited");
    // Games with a human seat are not capped.
    server
        .create_game(
            json!({"white": {"kind": "human"}, "black": {"kind": "ai", "level": 1}}),
            None,
        )
        .await;

    // The operator's DELETE: refused without the right token...
    let id = first.1["game"]["id"].as_str().expect("id").to_string();
    assert_error(&delete_game(&server, &id, None).await, 401, "unauthorized");
    assert_error(
        &delete_game(&server, &id, Some("not-the-admin-token")).await,
        401,
        "unauthorized",
    );
    assert_error(
        &delete_game(&server, &Uuid::new_v4().to_string(), Some(ADMIN)).await,
        404,
        "not_found",
    );
    assert_eq!(server.state(&id).await["status"], "active");
    // ...and with it, the game ends as aborted, and its place is free.
    let (status, stopped) = delete_game(&server, &id, Some(ADMIN)).await;
    assert_eq!(status, 200, "{stopped}");
    assert_eq!(stopped["status"], "finished");
    assert_eq!(stopped["termination"], "aborted");
    assert_eq!(stopped["result"], Value::Null);
    assert_eq!(server.state(&id).await["termination"], "aborted");
    assert_error(
        &delete_game(&server, &id, Some(ADMIN)).await,
        409,
        "game_over",
    );
    assert_eq!(create_show(&server, "198.51.100.1").await.0, 201);
    server.stop().await;
}

#[tokio::test]
async fn without_an_admin_token_operator_actions_are_off() {
    let db = TestDb::new();
    let server = TestServer::start(test_config(&db)).await;
    let (game, _) = server
        .create_game(
            json!({"white": {"kind": "human"}, "black": {"kind": "human"}}),
            None,
        )
        .await;
    let id = game["id"].as_str().expect("id");
    assert_error(
        &delete_game(&server, id, Some(ADMIN)).await,
        403,
        "forbidden",
    );
    assert_eq!(server.state(id).await["status"], "waiting");
    server.stop().await;
}

#[tokio::test]
async fn ai_v_ai_games_resumed_after_a_restart_still_count_in_the_cap() {
    let db = TestDb::new();
    let config = || capped(&db, 2);
    let server = TestServer::start(config()).await;
    let mut ids = Vec::new();
    for client in ["198.51.100.1", "198.51.100.2"] {
        let (status, created) = create_show(&server, client).await;
        assert_eq!(status, 201, "{created}");
        ids.push(created["game"]["id"].as_str().expect("id").to_string());
    }
    assert_error(
        &create_show(&server, "198.51.100.3").await,
        429,
        "rate_limited",
    );
    server.stop().await;

    // After the restart the two games run again and fill the server's cap.
    let server = TestServer::start(config()).await;
    for id in &ids {
        assert_eq!(server.state(id).await["status"], "active");
    }
    let answer = create_show(&server, "198.51.100.3").await;
    assert_error(&answer, 429, "rate_limited");
    println!("after a restart: {}", answer.1["error"]["message"]);
    // Their creators are not stored: they count for no client, so the
    // refusal is the server's cap.
    assert!(answer.1["error"]["message"]
        .as_str()
        .unwrap_or("")
        .contains("server"));
    // One ends (an operator stops it): its place is free again.
    let (status, stopped) = delete_game(&server, &ids[0], Some(ADMIN)).await;
    assert_eq!(status, 200, "{stopped}");
    let (status, created) = create_show(&server, "198.51.100.3").await;
    assert_eq!(status, 201, "{created}");
    assert_error(
        &create_show(&server, "198.51.100.4").await,
        429,
        "rate_limited",
    );
    server.stop().await;
}

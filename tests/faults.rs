//! Faults of the database and of time: a locked database answers 503
//! `unavailable` and changes nothing, a request that waits too long for its
//! game answers 503 too, and games nobody plays any more end by themselves.

mod support;

use std::time::Duration;

use serde_json::json;
use sqlx::Connection;
use support::*;

async fn try_move(
    server: &TestServer,
    id: &str,
    token: &str,
    uci: &str,
) -> (u16, serde_json::Value) {
    server
        .post(
            &format!("/api/games/{id}/move"),
            Some(token),
            Some(json!({ "uci": uci })),
        )
        .await
}

#[tokio::test]
async fn a_locked_database_answers_503_and_changes_nothing() {
    let db = TestDb::new();
    let mut config = test_config(&db);
    config.storage.db_busy_timeout_ms = 200;
    let server = TestServer::start(config).await;
    let (id, white, black) = server
        .human_game(json!({"clock": {"initial": 600, "increment": 0}}))
        .await;
    server.play(&id, &white, "e2e4").await;
    let mut watcher = WsClient::connect(&server, &id, None).await;
    assert_eq!(moves(&watcher.next_state().await), ["e2e4"]);

    let lock = Lock::take(&db).await;
    let refused = try_move(&server, &id, &black, "e7e5").await;
    assert_error(&refused, 503, "unavailable");
    let message = refused.1["error"]["message"].as_str().unwrap();
    assert!(message.contains("nothing changed"), "{message}");
    // A resignation is refused the same way; the game is as it was.
    let resign = server
        .post(&format!("/api/games/{id}/resign"), Some(&black), None)
        .await;
    assert_error(&resign, 503, "unavailable");
    let state = server.state(&id).await;
    assert_eq!(moves(&state), ["e2e4"]);
    assert_eq!(state["status"], "active");
    assert_eq!(state["turn"], "black");
    lock.release().await;

    // The lock is gone: the same move goes through, and nothing failed was
    // ever broadcast.
    let played = server.play(&id, &black, "e7e5").await;
    assert_eq!(moves(&played), ["e2e4", "e7e5"]);
    assert_eq!(moves(&watcher.next_state().await), ["e2e4", "e7e5"]);
    server.stop().await;
    let server = TestServer::start(test_config(&db)).await;
    assert_eq!(moves(&server.state(&id).await), ["e2e4", "e7e5"]);
    server.stop().await;
}

/// A commit that fails (here: a deferred foreign key, checked only at
/// `COMMIT`, planted by a trigger) leaves the outcome unknown to the server:
/// the mover is told to reload, the game is reloaded from the database, and
/// it shows exactly what the database holds.
#[tokio::test]
async fn a_failed_commit_reloads_the_game_from_the_database() {
    let db = TestDb::new();
    let server = TestServer::start(test_config(&db)).await;
    let (id, white, black) = server.human_game(json!({})).await;
    server.play(&id, &white, "e2e4").await;
    let mut watcher = WsClient::connect(&server, &id, None).await;
    watcher.next_state().await;

    let mut saboteur = sqlx::SqliteConnection::connect(&db.url()).await.unwrap();
    for sql in [
        "CREATE TABLE trap (game TEXT REFERENCES games(id) DEFERRABLE INITIALLY DEFERRED)",
        "CREATE TRIGGER spring AFTER INSERT ON moves WHEN NEW.uci = 'e7e5'
         BEGIN INSERT INTO trap VALUES ('no such game'); END",
    ] {
        sqlx::query(sql).execute(&mut saboteur).await.unwrap();
    }
    let failed = try_move(&server, &id, &black, "e7e5").await;
    assert_error(&failed, 503, "unavailable");
    let message = failed.1["error"]["message"].as_str().unwrap();
    assert!(message.contains("reload the game"), "{message}");
    let state = server.state(&id).await;
    assert_eq!(moves(&state), ["e2e4"]);
    assert_eq!(state["turn"], "black");

    sqlx::query("DROP TRIGGER spring")
        .execute(&mut saboteur)
        .await
        .unwrap();
    saboteur.close().await.unwrap();
    let played = server.play(&id, &black, "e7e5").await;
    assert_eq!(moves(&played), ["e2e4", "e7e5"]);
    // The spectator saw the reloaded state (unchanged) and then the move;
    // never a state the database did not hold.
    let seen = watcher
        .state_where("the move", |s| moves(s).len() == 2)
        .await;
    assert_eq!(moves(&seen), ["e2e4", "e7e5"]);
    server.stop().await;
}

#[tokio::test]
async fn a_request_has_a_deadline() {
    let db = TestDb::new();
    let mut config = test_config(&db);
    config.storage.db_busy_timeout_ms = 3_000;
    config.games.game_deadline_ms = 300;
    let server = TestServer::start(config).await;
    let (id, white, black) = server.human_game(json!({})).await;
    server.play(&id, &white, "d2d4").await;

    let lock = Lock::take(&db).await;
    // The game's write waits for the lock; the request does not wait with it.
    let late = try_move(&server, &id, &black, "d7d5").await;
    assert_error(&late, 503, "unavailable");
    let message = late.1["error"]["message"].as_str().unwrap();
    assert!(message.contains("did not answer in time"), "{message}");
    lock.release().await;
    // The move was still taking effect, as the message warns: once the
    // lock is gone it is stored and shown.
    let state = server
        .wait_state(&id, "the late move", |s| moves(s).len() == 2)
        .await;
    assert_eq!(moves(&state), ["d2d4", "d7d5"]);
    server.stop().await;
}

#[tokio::test]
async fn games_nobody_plays_end_by_themselves() {
    let db = TestDb::new();
    let mut config = test_config(&db);
    config.games.waiting_expiry_secs = 1;
    config.games.idle_game_secs = 2;
    let server = TestServer::start(config).await;
    // Nobody joins this one.
    let (waiting, _) = server
        .create_game(
            json!({"white": {"kind": "human"}, "black": {"kind": "human"}, "as": "white"}),
            None,
        )
        .await;
    let waiting = waiting["id"].as_str().unwrap().to_string();
    // Untimed and abandoned after two moves, with white to move.
    let (idle, white, black) = server.human_game(json!({})).await;
    server.play(&idle, &white, "e2e4").await;
    server.play(&idle, &black, "e7e5").await;
    // Untimed and abandoned before any move.
    let (unplayed, _, _) = server.human_game(json!({})).await;
    // A timed game is left to its clock.
    let (timed, _, _) = server
        .human_game(json!({"clock": {"initial": 900, "increment": 0}}))
        .await;

    let state = server
        .wait_state(&waiting, "the waiting game to expire", |s| {
            s["status"] == "finished"
        })
        .await;
    assert_eq!(state["termination"], "aborted");
    assert_eq!(state["result"], serde_json::Value::Null);
    let state = server
        .wait_state(&idle, "the idle game to be adjudicated", |s| {
            s["status"] == "finished"
        })
        .await;
    assert_eq!(state["termination"], "timeout");
    assert_eq!(state["result"], "0-1", "white, to move, abandoned it");
    let state = server
        .wait_state(&unplayed, "the unplayed game to be aborted", |s| {
            s["status"] == "finished"
        })
        .await;
    assert_eq!(state["termination"], "aborted");
    // A few sweeps later the timed game still runs.
    tokio::time::sleep(Duration::from_millis(1_500)).await;
    assert_eq!(server.state(&timed).await["status"], "active");
    let (_, board) = server.get("/api/scoreboard").await;
    assert_eq!(board["colors"]["black"], 1);
    server.stop().await;
}

/// `GET /api/admin/stats` with the admin token, as (status, body).
async fn admin_stats(server: &TestServer, token: Option<&str>) -> (u16, serde_json::Value) {
    let mut request = server.http.get(server.url("/api/admin/stats"));
    if let Some(token) = token {
        request = request.bearer_auth(token);
    }
    read(request.send().await.expect("GET stats")).await
}

/// A game nobody needs (finished, no subscriber) leaves memory after
/// `--unload-after-ms`, and loads again from the database when asked for;
/// the operator's stats say so.
#[tokio::test]
async fn a_game_nobody_needs_leaves_memory_and_comes_back_when_asked() {
    const ADMIN: &str = "operator-secret-stats-0123456";
    let db = TestDb::new();
    let mut config = test_config(&db);
    config.ops.admin_token = Some(ADMIN.parse().expect("token"));
    config.games.unload_after_ms = 300;
    let server = TestServer::start(config).await;
    assert_eq!(admin_stats(&server, None).await.0, 401);
    assert_eq!(
        admin_stats(&server, Some("not-the-admin-token")).await.0,
        401
    );

    let (id, white, black) = server.human_game(json!({})).await;
    let mut watcher = WsClient::connect(&server, &id, None).await;
    watcher.next_state().await;
    server.play(&id, &white, "e2e4").await;
    server.play(&id, &black, "e7e5").await;
    let (status, stats) = admin_stats(&server, Some(ADMIN)).await;
    assert_eq!(status, 200, "{stats}");
    assert_eq!(stats["games_in_memory"], 1, "{stats}");
    assert!(
        stats["writer"]["writes"].as_u64().unwrap_or(0) >= 3,
        "{stats}"
    );
    assert_eq!(stats["ai"]["waiting_human"], 0, "{stats}");
    // Finished, but a spectator still watches: it stays.
    let (status, _) = server
        .post(&format!("/api/games/{id}/resign"), Some(&white), None)
        .await;
    assert_eq!(status, 200);
    tokio::time::sleep(Duration::from_millis(900)).await;
    assert_eq!(
        admin_stats(&server, Some(ADMIN)).await.1["games_in_memory"],
        1
    );
    // The spectator leaves: the game leaves memory.
    drop(watcher);
    within(WAIT, "the finished game to leave memory", async {
        while admin_stats(&server, Some(ADMIN)).await.1["games_in_memory"] != 0 {
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    })
    .await;
    // Asked for again, it is read back whole.
    let state = server.state(&id).await;
    assert_eq!(state["status"], "finished");
    assert_eq!(state["result"], "0-1");
    assert_eq!(state["moves"], json!(["e2e4", "e7e5"]));
    server.stop().await;
}

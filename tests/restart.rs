//! Restart with the same database: games continue where they stopped,
//! tokens still work, clocks resume from the stored times, AI seats think
//! again.

mod support;

use serde_json::{json, Value};
use support::*;

#[tokio::test]
async fn a_restarted_server_continues_the_game() {
    let db = TestDb::new();
    let server = TestServer::start(test_config(&db)).await;
    let (id, white, black) = server
        .human_game(json!({"clock": {"initial": 600, "increment": 5}}))
        .await;
    server.play(&id, &white, "e2e4").await;
    server.play(&id, &black, "c7c5").await;
    let (_, offered) = server
        .post(&format!("/api/games/{id}/draw"), Some(&white), None)
        .await;
    assert_eq!(offered["draw_offer"], "white");
    let stopped = server.play(&id, &white, "g1f3").await;
    let stored_clock = stopped["clock"].clone();
    server.stop().await;

    let server = TestServer::start(test_config(&db)).await;
    let state = server.state(&id).await;
    assert_eq!(moves(&state), ["e2e4", "c7c5", "g1f3"]);
    assert_eq!(state["san"], json!(["e4", "c5", "Nf3"]));
    assert_eq!(state["status"], "active");
    assert_eq!(state["turn"], "black");
    assert_eq!(state["draw_offer"], "white", "the standing offer survives");
    // Clocks continue from the times stored with the last move: the time
    // the server was down is charged to nobody.
    assert_eq!(state["clock"]["running"], "black");
    assert_eq!(state["clock"]["white_ms"], stored_clock["white_ms"]);
    let black_ms = state["clock"]["black_ms"].as_u64().unwrap();
    // Black had 600 s plus one increment when its turn began.
    assert!(black_ms <= 605_000, "{black_ms}");
    assert!(black_ms > 590_000);
    // The old tokens still hold their seats.
    let mut ws = WsClient::connect(&server, &id, Some(&black)).await;
    assert_eq!(ws.next_state().await["black"]["connected"], true);
    ws.send(json!({"type": "move", "uci": "d7d6"})).await;
    let state = ws.state_where("the move", |s| moves(s).len() == 4).await;
    assert_eq!(
        state["draw_offer"],
        Value::Null,
        "black's move declined the offer"
    );
    server.play(&id, &white, "d2d4").await;
    server.stop().await;

    // And once more, with the finished game: it stays finished.
    let server = TestServer::start(test_config(&db)).await;
    let (_, resigned) = server
        .post(&format!("/api/games/{id}/resign"), Some(&black), None)
        .await;
    assert_eq!(resigned["result"], "1-0");
    server.stop().await;
    let server = TestServer::start(test_config(&db)).await;
    let state = server.state(&id).await;
    assert_eq!(state["status"], "finished");
    assert_eq!(state["termination"], "resignation");
    assert_eq!(moves(&state).len(), 5);
    assert_eq!(state["clock"]["running"], Value::Null);
    let (_, board) = server.get("/api/scoreboard").await;
    assert_eq!(board["colors"]["white"], 1);
    server.stop().await;
}

#[tokio::test]
async fn ai_seats_think_again_after_a_restart() {
    let db = TestDb::new();
    // A long pacing delay holds the first AI move: the game is stored with
    // the AI to move and no move made.
    let mut config = test_config(&db);
    config.ai.ai_move_delay_ms = 60_000;
    let server = TestServer::start(config).await;
    let (game, _) = server
        .create_game(
            json!({"white": {"kind": "ai", "level": 1}, "black": {"kind": "ai", "level": 1}}),
            None,
        )
        .await;
    let id = game["id"].as_str().unwrap().to_string();
    assert_eq!(moves(&server.state(&id).await).len(), 0);
    server.stop().await;

    let server = TestServer::start(test_config(&db)).await;
    let state = server
        .wait_state(&id, "the resumed AIs to play", |s| moves(s).len() >= 6)
        .await;
    assert_eq!(state["white"], json!({"kind": "ai", "level": 1}));
    server.stop().await;

    // Human v AI: the human's move is stored; after a restart the AI answers.
    let db = TestDb::new();
    let server = TestServer::start(test_config(&db)).await;
    let (game, token) = server
        .create_game(
            json!({"white": {"kind": "human"}, "black": {"kind": "ai", "level": 2}}),
            None,
        )
        .await;
    let id = game["id"].as_str().unwrap().to_string();
    let token = token.unwrap();
    server.play(&id, &token, "d2d4").await;
    server
        .wait_state(&id, "the AI's answer", |s| moves(s).len() == 2)
        .await;
    server.stop().await;
    let server = TestServer::start(test_config(&db)).await;
    let state = server.state(&id).await;
    assert_eq!(state["turn"], "white");
    let reply = state["legal_moves"][0].as_str().unwrap().to_string();
    server.play(&id, &token, &reply).await;
    server
        .wait_state(&id, "the AI's answer after restart", |s| {
            moves(s).len() == 4
        })
        .await;
    server.stop().await;
}

/// Every acknowledged or broadcast move is already in the database when the
/// client sees it (read through a separate connection to the file).
#[tokio::test]
async fn moves_are_committed_before_they_are_seen() {
    let db = TestDb::new();
    let server = TestServer::start(test_config(&db)).await;
    let reader = DbReader::connect(&db).await;
    let stored = |id: String| {
        let reader = &reader;
        async move {
            let count = reader
                .integer("SELECT COUNT(*) FROM moves WHERE game_id = $1", &id)
                .await;
            count as usize
        }
    };
    let (game, token) = server
        .create_game(
            json!({"white": {"kind": "human"}, "black": {"kind": "ai", "level": 1}}),
            None,
        )
        .await;
    let id = game["id"].as_str().unwrap().to_string();
    let token = token.unwrap();
    let mut watcher = WsClient::connect(&server, &id, None).await;
    watcher.next_state().await;
    for _ in 0..4 {
        let state = server.state(&id).await;
        if state["status"] == "finished" {
            break; // a quick mate by the AI: nothing more to check
        }
        let uci = state["legal_moves"][0].as_str().unwrap().to_string();
        let acknowledged = server.play(&id, &token, &uci).await;
        assert!(stored(id.clone()).await >= moves(&acknowledged).len());
        // The human's move, then the AI's, as the spectator sees them.
        for _ in 0..2 {
            let seen = watcher.next_state().await;
            assert!(stored(id.clone()).await >= moves(&seen).len());
        }
    }
    reader.close().await;
    server.stop().await;
}

/// The side to move is charged the thinking time it had spent before the
/// server stopped; the time the server was down is charged to nobody.
#[tokio::test]
async fn thinking_time_before_a_restart_is_charged() {
    let db = TestDb::new();
    let server = TestServer::start(test_config(&db)).await;
    let (id, white, black) = server
        .human_game(json!({"clock": {"initial": 600, "increment": 0}}))
        .await;
    // The clocks run once each side has made its first move (issue 22).
    server.play(&id, &white, "e2e4").await;
    server.play(&id, &black, "e7e5").await;
    // White thinks for 1.5 s, then the server stops for 2 s.
    tokio::time::sleep(std::time::Duration::from_millis(1_500)).await;
    server.stop().await;
    tokio::time::sleep(std::time::Duration::from_millis(2_000)).await;
    let server = TestServer::start(test_config(&db)).await;
    let state = server.state(&id).await;
    assert_eq!(state["clock"]["running"], "white");
    assert_eq!(state["clock"]["black_ms"], 600_000);
    let white_ms = state["clock"]["white_ms"].as_u64().unwrap();
    let charged = 600_000 - white_ms;
    assert!(
        charged >= 1_500,
        "the thinking before the stop: {charged} ms"
    );
    assert!(charged < 3_500, "not the downtime: {charged} ms");
    server.stop().await;
}

/// A game whose clock runs gets its actor back right after a start, with no
/// request for it: its flag falls on time (seen in the database itself, so
/// no request loads the game).
#[tokio::test]
async fn a_running_clock_runs_again_without_a_request() {
    let db = TestDb::new();
    let server = TestServer::start(test_config(&db)).await;
    let (id, white, black) = server
        .human_game(json!({"clock": {"initial": 2, "increment": 0}}))
        .await;
    server.play(&id, &white, "e2e4").await;
    server.play(&id, &black, "e7e5").await;
    server.stop().await;
    let server = TestServer::start(test_config(&db)).await;
    let reader = DbReader::connect(&db).await;
    let termination = within(WAIT, "the flag to fall", async {
        loop {
            let row = reader
                .texts(
                    "SELECT status, termination, result FROM games WHERE id = $1",
                    &id,
                )
                .await;
            if row[0].as_deref() == Some("finished") {
                return (row[0].clone(), row[1].clone(), row[2].clone());
            }
            tokio::time::sleep(std::time::Duration::from_millis(50)).await;
        }
    })
    .await;
    assert_eq!(termination.1.as_deref(), Some("timeout"));
    assert_eq!(termination.2.as_deref(), Some("0-1"));
    reader.close().await;
    server.stop().await;
}

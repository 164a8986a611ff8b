//! Offers between the players (issue 11): draw decline and withdrawal,
//! takebacks, a player's abort and rematches, over HTTP and WebSocket, with
//! the real service on port 0 and, for durability, the real binary killed
//! with SIGKILL.

mod support;

use serde_json::{json, Value};
use support::*;

fn path(id: &str, action: &str) -> String {
    format!("/api/games/{id}/{action}")
}

/// `POST /api/games/{id}/{action}` as a seat holder; must succeed.
async fn act(server: &TestServer, id: &str, token: &str, action: &str) -> Value {
    let (status, answer) = server.post(&path(id, action), Some(token), None).await;
    assert_eq!(status, 200, "{action}: {answer}");
    answer
}

/// When game `id` was last written, read from its database file.
async fn updated_at(db: &TestDb, id: &str) -> i64 {
    let reader = sqlx::SqlitePool::connect(&db.url()).await.expect("open");
    let at = sqlx::query_scalar("SELECT updated_at FROM games WHERE id = ?")
        .bind(id)
        .fetch_one(&reader)
        .await
        .expect("the game's row");
    reader.close().await;
    at
}

fn both_connected(state: &Value) -> bool {
    state["white"]["connected"] == true && state["black"]["connected"] == true
}

/// A game of a human (white, with the returned token) against the
/// computer at `level`: (id, token).
async fn ai_game(server: &TestServer, level: u8) -> (String, String) {
    let (game, token) = server
        .create_game(
            json!({"white": {"kind": "human"}, "black": {"kind": "ai", "level": level}}),
            None,
        )
        .await;
    assert_eq!(game["rated"], true);
    let id = game["id"].as_str().expect("id").to_string();
    (id, token.expect("the human's seat"))
}

#[tokio::test]
async fn draw_offers_are_declined_and_withdrawn_and_a_no_op_is_silent() {
    let db = TestDb::new();
    let server = TestServer::start(test_config(&db)).await;
    let (id, white, black) = server.human_game(json!({})).await;
    let mut white_ws = WsClient::connect(&server, &id, Some(&white)).await;
    let mut black_ws = WsClient::connect(&server, &id, Some(&black)).await;
    let mut watcher = WsClient::connect(&server, &id, None).await;
    for ws in [&mut white_ws, &mut black_ws, &mut watcher] {
        ws.next_state().await;
    }
    // Seats connecting send states too: from here on, the watcher's states
    // are the game's changes.
    watcher
        .state_where("both seats connected", both_connected)
        .await;

    // Offer over the socket, decline over the socket.
    white_ws.send(json!({"type": "draw"})).await;
    let state = watcher.next_state().await;
    assert_eq!(state["draw_offer"], "white");
    black_ws.send(json!({"type": "draw_decline"})).await;
    let state = watcher.next_state().await;
    assert_eq!(state["draw_offer"], Value::Null);
    assert_eq!(state["status"], "active");

    // Declining or withdrawing what is not there, and offering twice,
    // change nothing: 200 with the state, no broadcast. The next state the
    // watcher sees is the one of the following real change.
    let written = updated_at(&db, &id).await;
    let noop = act(&server, &id, &black, "draw/decline").await;
    assert_eq!(noop["draw_offer"], Value::Null);
    act(&server, &id, &white, "draw/withdraw").await;
    black_ws.send(json!({"type": "draw_withdraw"})).await;
    act(&server, &id, &white, "draw").await;
    act(&server, &id, &white, "draw").await;
    // The opponent cannot withdraw white's offer, nor white decline it.
    act(&server, &id, &black, "draw/withdraw").await;
    act(&server, &id, &white, "draw/decline").await;
    let state = watcher.next_state().await;
    assert_eq!(state["draw_offer"], "white");
    let offered = updated_at(&db, &id).await;
    assert!(offered >= written);
    // A write now would stamp a later millisecond (not a timing check:
    // the pause only makes a write visible); none comes.
    tokio::time::sleep(std::time::Duration::from_millis(5)).await;
    act(&server, &id, &white, "draw").await;
    act(&server, &id, &white, "draw/decline").await;
    act(&server, &id, &black, "draw/withdraw").await;
    assert_eq!(updated_at(&db, &id).await, offered, "no-ops write nothing");
    // White withdraws over HTTP.
    let state = act(&server, &id, &white, "draw/withdraw").await;
    assert_eq!(state["draw_offer"], Value::Null);
    assert_eq!(watcher.next_state().await["draw_offer"], Value::Null);

    // Spectators cannot answer; unknown tokens are refused.
    watcher.send(json!({"type": "draw_decline"})).await;
    watcher.expect_error("forbidden").await;
    let refused = server.post(&path(&id, "draw/decline"), None, None).await;
    assert_error(&refused, 401, "unauthorized");
    let refused = server
        .post(&path(&id, "draw/decline"), Some("nope"), None)
        .await;
    assert_error(&refused, 401, "unauthorized");

    // After the end there is no offer to answer.
    act(&server, &id, &white, "resign").await;
    let over = server
        .post(&path(&id, "draw/decline"), Some(&black), None)
        .await;
    assert_error(&over, 409, "game_over");
    server.stop().await;
}

#[tokio::test]
async fn a_takeback_between_people_needs_the_opponent() {
    let db = TestDb::new();
    let server = TestServer::start(test_config(&db)).await;
    let (id, white, black) = server.human_game(json!({})).await;
    let nothing = server
        .post(&path(&id, "takeback"), Some(&white), None)
        .await;
    assert_error(&nothing, 409, "nothing_to_take_back");
    server.play(&id, &white, "e2e4").await;
    server.play(&id, &black, "e7e5").await;
    // White asks on its own turn: its move and black's reply go.
    let state = act(&server, &id, &white, "takeback").await;
    assert_eq!(state["takeback_offer"], "white");
    assert_eq!(moves(&state).len(), 2, "nothing undone before an answer");
    // Black's `takeback` accepts the standing request.
    let state = act(&server, &id, &black, "takeback").await;
    assert_eq!(state["moves"], json!([]));
    assert_eq!(state["takebacks"], 1);
    assert_eq!(state["turn"], "white");
    assert_eq!(state["takeback_offer"], Value::Null);
    let nothing = server
        .post(&path(&id, "takeback"), Some(&black), None)
        .await;
    assert_error(&nothing, 409, "nothing_to_take_back");

    // Request, decline, request, withdraw.
    server.play(&id, &white, "d2d4").await;
    let mut black_ws = WsClient::connect(&server, &id, Some(&black)).await;
    black_ws.next_state().await;
    assert_eq!(
        act(&server, &id, &white, "takeback").await["takeback_offer"],
        "white"
    );
    black_ws
        .state_where("white's request", |s| s["takeback_offer"] == "white")
        .await;
    black_ws.send(json!({"type": "takeback_decline"})).await;
    let state = black_ws
        .state_where("the request declined", |s| s["takeback_offer"].is_null())
        .await;
    assert_eq!(moves(&state), ["d2d4"]);
    act(&server, &id, &white, "takeback").await;
    let state = act(&server, &id, &white, "takeback/withdraw").await;
    assert_eq!(state["takeback_offer"], Value::Null);
    // A move answers a standing request: it is dropped.
    act(&server, &id, &white, "takeback").await;
    let state = server.play(&id, &black, "d7d5").await;
    assert_eq!(state["takeback_offer"], Value::Null);

    // Accepted over the socket: black's own move and nothing else (it is
    // white's turn, so black's takeback undoes one ply).
    act(&server, &id, &black, "takeback").await;
    let mut white_ws = WsClient::connect(&server, &id, Some(&white)).await;
    white_ws.next_state().await;
    white_ws.send(json!({"type": "takeback"})).await;
    let state = white_ws
        .state_where("the takeback", |s| s["takebacks"] == 2)
        .await;
    assert_eq!(moves(&state), ["d2d4"]);
    assert_eq!(state["turn"], "black");
    assert_eq!(state["rated"], true, "agreed by both: still rated");
    // The game goes on from there; the PGN says takebacks were granted.
    server.play(&id, &black, "g8f6").await;
    let (_, _, pgn) = server.get_text(&path(&id, "pgn")).await;
    assert!(pgn.contains("[Takebacks \"2\"]"), "{pgn}");
    assert!(pgn.contains("1. d4 Nf6"), "{pgn}");
    server.stop().await;
}

#[tokio::test]
async fn the_computer_grants_a_takeback_at_once_and_the_game_turns_casual() {
    let db = TestDb::new();
    let server = TestServer::start(test_config(&db)).await;
    let (id, token) = ai_game(&server, 1).await;
    server.play(&id, &token, "e2e4").await;
    server
        .wait_state(&id, "the computer's reply", |s| moves(s).len() == 2)
        .await;
    let state = act(&server, &id, &token, "takeback").await;
    assert_eq!(state["moves"], json!([]), "the reply and the move undone");
    assert_eq!(state["takebacks"], 1);
    assert_eq!(state["takeback_offer"], Value::Null);
    assert_eq!(state["rated"], false);
    // The computer answers the new move.
    server.play(&id, &token, "d2d4").await;
    let state = server
        .wait_state(&id, "the computer's new reply", |s| moves(s).len() == 2)
        .await;
    assert_eq!(moves(&state)[0], "d2d4");
    // Resigned now, it counts as a casual game only.
    act(&server, &id, &token, "resign").await;
    let (_, board) = server.get("/api/scoreboard").await;
    assert_eq!(board["casual"]["black"], 1, "{board}");
    assert_eq!(board["colors"]["black"], 0, "{board}");
    server.stop().await;
}

#[tokio::test]
async fn a_player_aborts_until_each_side_has_moved() {
    let db = TestDb::new();
    let server = TestServer::start(test_config(&db)).await;
    // (moves before the abort, what the abort answers)
    let cases: [(&[&str], Option<&str>); 3] = [
        (&[], None),
        (&["e2e4"], None),
        (&["e2e4", "e7e5"], Some("abort_too_late")),
    ];
    for (played, refused) in cases {
        let (id, white, black) = server.human_game(json!({})).await;
        let tokens = [&white, &black];
        for (ply, uci) in played.iter().enumerate() {
            server.play(&id, tokens[ply % 2], uci).await;
        }
        // Either player may abort: the one not to move here.
        let aborter = tokens[(played.len() + 1) % 2];
        let answer = server.post(&path(&id, "abort"), Some(aborter), None).await;
        match refused {
            None => {
                assert_eq!(answer.0, 200, "{played:?}: {}", answer.1);
                assert_eq!(answer.1["status"], "finished");
                assert_eq!(answer.1["termination"], "aborted");
                assert_eq!(answer.1["result"], Value::Null);
            }
            Some(code) => {
                assert_error(&answer, 409, code);
                assert_eq!(server.state(&id).await["status"], "active");
            }
        }
    }
    // Over the socket too, and a finished game cannot be aborted.
    let (id, white, _black) = server.human_game(json!({})).await;
    let mut ws = WsClient::connect(&server, &id, Some(&white)).await;
    ws.next_state().await;
    ws.send(json!({"type": "abort"})).await;
    let state = ws
        .state_where("the abort", |s| s["status"] == "finished")
        .await;
    assert_eq!(state["termination"], "aborted");
    ws.send(json!({"type": "abort"})).await;
    ws.expect_error("game_over").await;
    let (_, board) = server.get("/api/scoreboard").await;
    assert_eq!(board["colors"], json!({"white": 0, "black": 0, "draws": 0}));
    server.stop().await;
}

/// A private game with a clock, joined with its invite: (id, white, black).
async fn private_game(server: &TestServer) -> (String, String, String) {
    let (status, created) = server
        .post(
            "/api/games",
            None,
            Some(json!({
                "white": {"kind": "human"}, "black": {"kind": "human"},
                "visibility": "private", "clock": {"initial": 120, "increment": 1}
            })),
        )
        .await;
    assert_eq!(status, 201, "{created}");
    let id = created["game"]["id"].as_str().unwrap().to_string();
    let white = created["seat"]["token"].as_str().unwrap().to_string();
    let (status, joined) = server
        .post(
            &path(&id, "join"),
            None,
            Some(json!({"invite": created["invite"]})),
        )
        .await;
    assert_eq!(status, 200, "{joined}");
    let black = joined["seat"]["token"].as_str().unwrap().to_string();
    (id, white, black)
}

#[tokio::test]
async fn a_rematch_offer_accepted_seats_both_players_and_tells_only_them() {
    let db = TestDb::new();
    let server = TestServer::start(test_config(&db)).await;
    let (id, white, black) = private_game(&server).await;
    let early = server.post(&path(&id, "rematch"), Some(&white), None).await;
    assert_error(&early, 409, "no_rematch");
    server.play(&id, &white, "e2e4").await;
    act(&server, &id, &black, "resign").await;

    let mut white_ws = WsClient::connect(&server, &id, Some(&white)).await;
    let mut black_ws = WsClient::connect(&server, &id, None).await;
    let mut watcher = WsClient::connect(&server, &id, None).await;
    for ws in [&mut white_ws, &mut black_ws, &mut watcher] {
        ws.next_state().await;
    }
    // Black's connection takes its seat by message.
    black_ws
        .send(json!({"type": "auth", "token": black.clone()}))
        .await;
    assert_eq!(black_ws.next().await["type"], "authenticated");
    watcher
        .state_where("both seats connected", both_connected)
        .await;

    white_ws.send(json!({"type": "rematch"})).await;
    let state = watcher.next_state().await;
    assert_eq!(state["rematch_offer"], "white");
    assert_eq!(state["rematch"], Value::Null);
    black_ws.send(json!({"type": "rematch"})).await;
    let state = watcher.next_state().await;
    let new_id = state["rematch"]
        .as_str()
        .expect("the new game's id")
        .to_string();
    assert_eq!(state["rematch_offer"], Value::Null);

    // Each player's socket gets its own new seat, right after the state.
    let mut seats = Vec::new();
    for ws in [&mut white_ws, &mut black_ws] {
        ws.state_where("the agreed rematch", |s| s["rematch"].is_string())
            .await;
        let message = ws.next().await;
        assert_eq!(message["type"], "rematch", "{message}");
        assert_eq!(message["game"], new_id.as_str());
        seats.push((
            message["color"].as_str().unwrap().to_string(),
            message["token"].as_str().unwrap().to_string(),
        ));
    }
    assert_eq!(seats[0].0, "black", "white plays black in the rematch");
    assert_eq!(seats[1].0, "white");
    assert_ne!(seats[0].1, seats[1].1);
    // The watcher is told nothing more: its next message is a presence
    // change (another spectator arriving), not a seat.
    let _other = WsClient::connect(&server, &id, None).await;
    let next = watcher.next_message().await;
    assert_eq!(next["type"], "presence", "{next}");

    // The new game: colours swapped, same clock and visibility, running.
    let new = server.state(&new_id).await;
    assert_eq!(new["status"], "active");
    assert_eq!(new["visibility"], "private");
    let white_ms = new["clock"]["white_ms"].as_u64().unwrap();
    assert!((100_000..=120_000).contains(&white_ms), "{new}");
    assert_eq!(new["clock"]["black_ms"], 120_000);
    assert_eq!(new["clock"]["increment_ms"], 1_000);
    let (old_black_new_token, old_white_new_token) = (&seats[1].1, &seats[0].1);
    let refused = server
        .post(
            &path(&new_id, "move"),
            Some(&black),
            Some(json!({"uci": "e2e4"})),
        )
        .await;
    assert_error(&refused, 403, "forbidden");
    server.play(&new_id, old_black_new_token, "e2e4").await;
    server.play(&new_id, old_white_new_token, "c7c5").await;

    // A seat's socket opened after the agreement gets its seat after the
    // first state.
    let mut late = WsClient::connect(&server, &id, Some(&black)).await;
    assert_eq!(late.next_state().await["rematch"], new_id.as_str());
    let message = late.next().await;
    assert_eq!(message["type"], "rematch");
    assert_eq!(message["token"], old_black_new_token.as_str());

    // So does one that takes its seat with `auth` after the agreement.
    let mut authed = WsClient::connect(&server, &id, None).await;
    authed.next_state().await;
    authed
        .send(json!({"type": "auth", "token": white.clone()}))
        .await;
    assert_eq!(authed.next().await["type"], "authenticated");
    let message = within(WAIT, "the seat after auth", async {
        loop {
            let message = authed.next().await;
            if message["type"] != "state" {
                return message;
            }
        }
    })
    .await;
    assert_eq!(message["type"], "rematch", "{message}");
    assert_eq!(message["token"], old_white_new_token.as_str());

    // Over HTTP, `rematch` again gives the same seat (an HTTP-only player
    // finds the id in the state and asks for its seat).
    let again = act(&server, &id, &white, "rematch").await;
    assert_eq!(again["rematch"]["id"], new_id.as_str());
    assert_eq!(again["rematch"]["seat"]["color"], "black");
    assert_eq!(
        again["rematch"]["seat"]["token"],
        old_white_new_token.as_str()
    );
    assert_eq!(again["game"]["rematch"], new_id.as_str());
    server.stop().await;
}

#[tokio::test]
async fn rematch_offers_are_declined_and_withdrawn() {
    let db = TestDb::new();
    let server = TestServer::start(test_config(&db)).await;
    let (id, white, black) = server.human_game(json!({})).await;
    act(&server, &id, &white, "resign").await;
    let offered = act(&server, &id, &white, "rematch").await;
    assert_eq!(offered["rematch"], Value::Null, "not agreed yet");
    assert_eq!(offered["game"]["rematch_offer"], "white");
    let state = act(&server, &id, &black, "rematch/decline").await;
    assert_eq!(state["rematch_offer"], Value::Null);
    // Black offers now; white withdraws nothing (no-op), black withdraws.
    act(&server, &id, &black, "rematch").await;
    assert_eq!(
        act(&server, &id, &white, "rematch/withdraw").await["rematch_offer"],
        "black"
    );
    let state = act(&server, &id, &black, "rematch/withdraw").await;
    assert_eq!(state["rematch_offer"], Value::Null);
    assert_eq!(state["rematch"], Value::Null);
    // A declined offer leaves no game behind: a new offer and its
    // acceptance over HTTP give the acceptor its seat at once.
    act(&server, &id, &white, "rematch").await;
    let agreed = act(&server, &id, &black, "rematch").await;
    let seat = &agreed["rematch"]["seat"];
    assert_eq!(seat["color"], "white");
    let new_id = agreed["rematch"]["id"].as_str().unwrap().to_string();
    server
        .play(&new_id, seat["token"].as_str().unwrap(), "d2d4")
        .await;
    // A waiting game aborted has nobody to play again.
    let (game, token) = server
        .create_game(
            json!({"white": {"kind": "human"}, "black": {"kind": "human"}}),
            None,
        )
        .await;
    let lone = game["id"].as_str().unwrap();
    let token = token.unwrap();
    act(&server, lone, &token, "abort").await;
    let nobody = server
        .post(&path(lone, "rematch"), Some(&token), None)
        .await;
    assert_error(&nobody, 409, "no_rematch");
    server.stop().await;
}

#[tokio::test]
async fn a_rematch_against_the_computer_starts_at_once() {
    let db = TestDb::new();
    let server = TestServer::start(test_config(&db)).await;
    let (id, token) = ai_game(&server, 2).await;
    act(&server, &id, &token, "resign").await;
    let answer = act(&server, &id, &token, "rematch").await;
    assert_eq!(answer["game"]["rematch_offer"], Value::Null);
    let new_id = answer["rematch"]["id"]
        .as_str()
        .expect("agreed")
        .to_string();
    assert_eq!(answer["rematch"]["seat"]["color"], "black");
    let new = server
        .wait_state(&new_id, "the computer's first move", |s| {
            moves(s).len() == 1
        })
        .await;
    assert_eq!(new["white"], json!({"kind": "ai", "level": 2}));
    let seat = answer["rematch"]["seat"]["token"].as_str().unwrap();
    let legal = new["legal_moves"][0].as_str().unwrap();
    server.play(&new_id, seat, legal).await;
    server.stop().await;
}

// --------------------------------------------------- durability (SIGKILL)

async fn post_to(base: &str, path: &str, token: Option<&str>, body: Option<Value>) -> Value {
    let mut request = reqwest::Client::new().post(format!("{base}{path}"));
    if let Some(token) = token {
        request = request.bearer_auth(token);
    }
    if let Some(body) = body {
        request = request.json(&body);
    }
    let (status, answer) = read(request.send().await.expect("POST")).await;
    assert!(status == 200 || status == 201, "{path}: {status} {answer}");
    answer
}

#[tokio::test]
async fn acknowledged_takebacks_and_rematches_survive_sigkill() {
    let db = TestDb::new();
    let (mut child, base) = spawn_server_binary(&db.path()).await;
    let humans = json!({"white": {"kind": "human"}, "black": {"kind": "human"}});
    let created = post_to(&base, "/api/games", None, Some(humans)).await;
    let id = created["game"]["id"].as_str().unwrap().to_string();
    let white = created["seat"]["token"].as_str().unwrap().to_string();
    let joined = post_to(&base, &path(&id, "join"), None, None).await;
    let black = joined["seat"]["token"].as_str().unwrap().to_string();
    for (token, uci) in [(&white, "e2e4"), (&black, "e7e5"), (&white, "g1f3")] {
        post_to(
            &base,
            &path(&id, "move"),
            Some(token),
            Some(json!({ "uci": uci })),
        )
        .await;
    }
    post_to(&base, &path(&id, "takeback"), Some(&white), None).await;
    let acknowledged = post_to(&base, &path(&id, "takeback"), Some(&black), None).await;
    assert_eq!(acknowledged["moves"], json!(["e2e4", "e7e5"]));
    // A second game, finished with a rematch agreed.
    let humans = json!({"white": {"kind": "human"}, "black": {"kind": "human"}});
    let created = post_to(&base, "/api/games", None, Some(humans)).await;
    let old = created["game"]["id"].as_str().unwrap().to_string();
    let old_white = created["seat"]["token"].as_str().unwrap().to_string();
    let joined = post_to(&base, &path(&old, "join"), None, None).await;
    let old_black = joined["seat"]["token"].as_str().unwrap().to_string();
    post_to(&base, &path(&old, "resign"), Some(&old_white), None).await;
    post_to(&base, &path(&old, "rematch"), Some(&old_white), None).await;
    let agreed = post_to(&base, &path(&old, "rematch"), Some(&old_black), None).await;
    let new_id = agreed["rematch"]["id"].as_str().unwrap().to_string();
    let new_white = agreed["rematch"]["seat"]["token"]
        .as_str()
        .unwrap()
        .to_string();

    child.start_kill().expect("SIGKILL");
    within(WAIT, "the killed server to exit", child.wait())
        .await
        .expect("wait");
    let (_child, base) = spawn_server_binary(&db.path()).await;

    let get = |path: String| {
        let base = base.clone();
        async move {
            let response = reqwest::Client::new()
                .get(format!("{base}{path}"))
                .send()
                .await
                .expect("GET");
            read(response).await.1
        }
    };
    let state = get(format!("/api/games/{id}")).await;
    assert_eq!(state["moves"], json!(["e2e4", "e7e5"]));
    assert_eq!(state["takebacks"], 1);
    assert_eq!(state["turn"], "white");
    // The taken-back ply is gone from the moves table: it can be played
    // again, differently.
    let state = post_to(
        &base,
        &path(&id, "move"),
        Some(&white),
        Some(json!({"uci": "b1c3"})),
    )
    .await;
    assert_eq!(state["san"], json!(["e4", "e5", "Nc3"]));

    let old_state = get(format!("/api/games/{old}")).await;
    assert_eq!(old_state["rematch"], new_id.as_str());
    let new_state = get(format!("/api/games/{new_id}")).await;
    assert_eq!(new_state["status"], "active");
    post_to(
        &base,
        &path(&new_id, "move"),
        Some(&new_white),
        Some(json!({"uci": "e2e4"})),
    )
    .await;
    // The seat comes back the same after the restart.
    let again = post_to(&base, &path(&old, "rematch"), Some(&old_black), None).await;
    assert_eq!(again["rematch"]["seat"]["token"], new_white.as_str());
}

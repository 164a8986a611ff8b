//! Web play additions (issue 11): pass and play (`"as": "both"`, one
//! device holding both human seats) and the WebSocket heartbeat
//! (`{"type": "ping"}` answered with `{"type": "pong"}`).

mod support;

use serde_json::{json, Value};
use support::*;

fn human_v_human(extra: Value) -> Value {
    let mut body = json!({"white": {"kind": "human"}, "black": {"kind": "human"}});
    if let (Some(body), Some(extra)) = (body.as_object_mut(), extra.as_object()) {
        body.extend(extra.clone());
    }
    body
}

#[tokio::test]
async fn pass_and_play_holds_both_seats_and_starts_at_once() {
    let db = TestDb::new();
    let server = TestServer::start(test_config(&db)).await;
    let (status, created) = server
        .post(
            "/api/games",
            None,
            Some(human_v_human(
                json!({"as": "both", "clock": {"initial": 300, "increment": 2}}),
            )),
        )
        .await;
    assert_eq!(status, 201, "{created}");
    let game = &created["game"];
    let id = game["id"].as_str().expect("id").to_string();
    assert_eq!(game["status"], "active", "no seat is free: {game}");
    assert_eq!(game["joinable"], false);
    // The clocks wait for each side's first move (issue 22).
    assert_eq!(game["clock"]["running"], Value::Null);
    assert!(game["first_move_ms"].as_u64().is_some(), "{game}");
    assert!(created.get("invite").is_none(), "nobody to invite");
    let seats = created["seats"].as_array().expect("seats");
    assert_eq!(seats.len(), 2);
    assert_eq!(seats[0]["color"], "white");
    assert_eq!(seats[1]["color"], "black");
    // `seat` stays the contract's one seat: the white one.
    assert_eq!(created["seat"], seats[0]);
    let white = seats[0]["token"].as_str().expect("token");
    let black = seats[1]["token"].as_str().expect("token");
    assert_ne!(white, black);

    // Each token moves its own colour only.
    let refused = server
        .post(
            &format!("/api/games/{id}/move"),
            Some(black),
            Some(json!({"uci": "e2e4"})),
        )
        .await;
    assert_error(&refused, 409, "not_your_turn");
    server.play(&id, white, "e2e4").await;
    server.play(&id, black, "e7e5").await;
    let state = server.state(&id).await;
    assert_eq!(moves(&state), ["e2e4", "e7e5"]);

    // Nobody can join a game whose seats are both held.
    let join = server
        .post(&format!("/api/games/{id}/join"), None, None)
        .await;
    assert_error(&join, 409, "seat_taken");
    server.stop().await;
}

#[tokio::test]
async fn pass_and_play_seats_are_anonymous_even_for_a_registered_player() {
    let db = TestDb::new();
    let server = TestServer::start(test_config(&db)).await;
    let (_, player) = server
        .post("/api/players", None, Some(json!({"name": "solo"})))
        .await;
    let token = player["token"].as_str().expect("player token");
    let (status, created) = server
        .post(
            "/api/games",
            Some(token),
            Some(human_v_human(json!({"as": "both"}))),
        )
        .await;
    assert_eq!(status, 201, "{created}");
    assert_eq!(created["game"]["white"]["name"], Value::Null);
    assert_eq!(created["game"]["black"]["name"], Value::Null);
    server.stop().await;
}

#[tokio::test]
async fn as_both_needs_two_human_seats_and_changes_nothing_otherwise() {
    let db = TestDb::new();
    let server = TestServer::start(test_config(&db)).await;
    let cases = [
        json!({"white": {"kind": "human"}, "black": {"kind": "ai", "level": 1}, "as": "both"}),
        json!({"white": {"kind": "ai", "level": 1}, "black": {"kind": "ai", "level": 1}, "as": "both"}),
        human_v_human(json!({"as": "all"})),
        human_v_human(json!({"as": "Both"})),
    ];
    for body in cases {
        let answer = server.post("/api/games", None, Some(body.clone())).await;
        assert_error(&answer, 400, "bad_request");
    }
    let (_, list) = server.get("/api/games").await;
    assert_eq!(list["games"], json!([]), "nothing was created");
    server.stop().await;
}

#[tokio::test]
async fn a_ping_message_is_answered_with_pong_for_players_and_spectators() {
    let db = TestDb::new();
    let server = TestServer::start(test_config(&db)).await;
    let (id, white, _) = server.human_game(json!({})).await;
    for token in [Some(white.as_str()), None] {
        let mut ws = WsClient::connect(&server, &id, token).await;
        let first = ws.next_state().await;
        assert_eq!(first["id"], id.as_str());
        ws.send(json!({"type": "ping"})).await;
        assert_eq!(ws.next().await, json!({"type": "pong"}));
        // The heartbeat changes nothing: a second one is answered alike,
        // and no state was broadcast in between.
        ws.send(json!({"type": "ping"})).await;
        assert_eq!(ws.next().await, json!({"type": "pong"}));
        // A seat leaving is a state for whoever watches (the contract's
        // `connected`): let it be counted gone before the next connects.
        drop(ws);
        server
            .wait_state(&id, "the connection gone", |s| {
                s["white"]["connected"] == false && s["spectators"] == 0
            })
            .await;
    }
    assert!(moves(&server.state(&id).await).is_empty());
    server.stop().await;
}

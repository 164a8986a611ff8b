//! Games cost bounded storage (issue 23): a cap per client on games left
//! waiting, aborted games with at most one move deleted after their
//! retention, and anonymous finished games deleted when the operator sets
//! a retention for them. Everything else is kept.

mod support;

use std::time::Duration;

use serde_json::{json, Value};
use support::*;

const ADMIN: &str = "retention-admin-token";

fn open_seek() -> Value {
    json!({"white": {"kind": "human"}, "black": {"kind": "human"}, "creator": "white"})
}

/// POST /api/games claiming, through the trusted proxy, to come from
/// `client` (None: the test's own address).
async fn create_from(server: &TestServer, client: Option<&str>, body: Value) -> (u16, Value) {
    let mut request = server.http.post(server.url("/api/games")).json(&body);
    if let Some(client) = client {
        request = request.header("x-forwarded-for", client);
    }
    read(request.send().await.expect("POST")).await
}

fn id_and_token(answer: &Value) -> (String, String) {
    let id = answer["game"]["id"].as_str().expect("id").to_string();
    let token = answer["seat"]["token"].as_str().expect("seat").to_string();
    (id, token)
}

#[tokio::test]
async fn a_client_may_leave_only_so_many_games_waiting() {
    let db = TestDb::new();
    let mut config = test_config(&db);
    config.games.max_waiting_games_per_client = 2;
    config.http.trusted_proxies = vec!["127.0.0.0/8".parse().expect("range")];
    let server = TestServer::start(config).await;

    let first = create_from(&server, None, open_seek()).await;
    let second = create_from(&server, None, open_seek()).await;
    assert_eq!((first.0, second.0), (201, 201), "{first:?} {second:?}");
    let refused = create_from(&server, None, open_seek()).await;
    assert_error(&refused, 429, "rate_limited");
    assert!(
        refused.1["error"]["message"]
            .as_str()
            .is_some_and(|m| m.contains("waiting")),
        "{refused:?}"
    );
    // A private invitation waits too.
    let mut private = open_seek();
    private["visibility"] = json!("private");
    assert_error(
        &create_from(&server, None, private).await,
        429,
        "rate_limited",
    );

    // Games that do not wait are not capped, nor are other clients.
    let ai = json!({"white": {"kind": "human"}, "black": {"kind": "ai", "level": 1},
                    "creator": "white"});
    assert_eq!(create_from(&server, None, ai).await.0, 201);
    let other = create_from(&server, Some("198.51.100.7"), open_seek()).await;
    assert_eq!(other.0, 201, "{other:?}");

    // A game that stops waiting (joined, or aborted) frees its place.
    let (first_id, _) = id_and_token(&first.1);
    let (status, joined) = server
        .post(&format!("/api/games/{first_id}/join"), None, None)
        .await;
    assert_eq!(status, 200, "{joined}");
    assert_eq!(create_from(&server, None, open_seek()).await.0, 201);
    assert_error(
        &create_from(&server, None, open_seek()).await,
        429,
        "rate_limited",
    );
    let (second_id, second_token) = id_and_token(&second.1);
    end(&server, &second_id, "abort", &second_token).await;
    assert_eq!(create_from(&server, None, open_seek()).await.0, 201);
    server.stop().await;
}

/// Whether game `id` is listed among the finished games (a list is read
/// from the database and never loads a game, which would keep it).
async fn listed(server: &TestServer, id: &str) -> bool {
    let (status, list) = server.get("/api/games?status=finished&limit=100").await;
    assert_eq!(status, 200, "{list}");
    list["games"]
        .as_array()
        .expect("games")
        .iter()
        .any(|game| game["id"] == id)
}

/// Waits until the finished games `gone` are deleted, then checks that
/// every game of `kept` is still there, whole.
async fn deleted_and_kept(server: &TestServer, gone: &[&str], kept: &[(&str, usize)]) {
    within(WAIT, "the retention sweep", async {
        loop {
            let mut left = false;
            for id in gone {
                left |= listed(server, id).await;
            }
            if !left {
                break;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    })
    .await;
    for id in gone {
        let answer = server.get(&format!("/api/games/{id}")).await;
        assert_error(&answer, 404, "not_found");
        let (status, _, _) = server.get_text(&format!("/api/games/{id}/pgn")).await;
        assert_eq!(status, 404, "the PGN of {id}");
    }
    for (id, plies) in kept {
        assert!(listed(server, id).await, "{id} was deleted");
        let state = server.state(id).await;
        assert_eq!(moves(&state).len(), *plies, "{state}");
    }
}

/// Ends game `id` with `how` (`resign` or `abort`) by the seat `token`:
/// the game's state after it.
async fn end(server: &TestServer, id: &str, how: &str, token: &str) -> Value {
    let (status, state) = server
        .post(&format!("/api/games/{id}/{how}"), Some(token), None)
        .await;
    assert_eq!(status, 200, "{how}: {state}");
    state
}

/// Plays `ucis` alternately with the two seats of game `id`.
async fn play_line(server: &TestServer, id: &str, white: &str, black: &str, ucis: &[&str]) {
    for (ply, uci) in ucis.iter().enumerate() {
        let token = if ply % 2 == 0 { white } else { black };
        server.play(id, token, uci).await;
    }
}

#[tokio::test]
async fn aborted_games_with_at_most_one_move_are_deleted_after_their_retention() {
    let db = TestDb::new();
    let mut config = test_config(&db);
    config.games.aborted_game_retention_secs = 1;
    // A game in memory is kept (a page may be showing it): leave quickly.
    config.games.unload_after_ms = 100;
    config.ops.admin_token = Some(ADMIN.parse().expect("token"));
    let server = TestServer::start(config).await;

    // Aborted while waiting; aborted after White's first move.
    let (waiting, waiting_id) = server.create_human(json!({"creator": "white"}), None).await;
    let waiting_seat = waiting["seat"]["token"].as_str().expect("seat").to_string();
    let (one_move, white, black) = server.human_game(json!({})).await;
    play_line(&server, &one_move, &white, &black, &["e2e4"]).await;
    for (id, token) in [(&waiting_id, &waiting_seat), (&one_move, &white)] {
        let state = end(&server, id, "abort", token).await;
        assert_eq!(state["termination"], "aborted");
    }

    // Kept: a game an operator stopped after real play, and a finished
    // anonymous game (no retention for those by default).
    let (stopped, white, black) = server.human_game(json!({})).await;
    play_line(&server, &stopped, &white, &black, &["e2e4", "e7e5", "g1f3"]).await;
    let answer = read(
        server
            .http
            .delete(server.url(&format!("/api/games/{stopped}")))
            .bearer_auth(ADMIN)
            .send()
            .await
            .expect("DELETE"),
    )
    .await;
    assert_eq!(answer.0, 200, "{answer:?}");
    assert_eq!(answer.1["termination"], "aborted");
    let (resigned, white, black) = server.human_game(json!({})).await;
    play_line(&server, &resigned, &white, &black, &["d2d4", "d7d5"]).await;
    end(&server, &resigned, "resign", &white).await;

    deleted_and_kept(
        &server,
        &[&waiting_id, &one_move],
        &[(&stopped, 3), (&resigned, 2)],
    )
    .await;
    server.stop().await;
}

#[tokio::test]
async fn anonymous_finished_games_are_deleted_when_the_operator_keeps_them_for_a_time() {
    let db = TestDb::new();
    let mut config = test_config(&db);
    config.games.anonymous_game_retention_secs = 1;
    config.games.aborted_game_retention_secs = 0;
    config.games.unload_after_ms = 100;
    let server = TestServer::start(config).await;

    // Deleted: a finished game of two anonymous people, and one of an
    // anonymous person against the computer.
    let (anonymous, white, black) = server.human_game(json!({})).await;
    play_line(&server, &anonymous, &white, &black, &["e2e4", "e7e5"]).await;
    end(&server, &anonymous, "resign", &black).await;
    let (vs_ai, token) = server
        .create_game(
            json!({"white": {"kind": "human"}, "black": {"kind": "ai", "level": 1},
                   "creator": "white"}),
            None,
        )
        .await;
    let vs_ai = vs_ai["id"].as_str().expect("id").to_string();
    let token = token.expect("seat");
    server.play(&vs_ai, &token, "e2e4").await;
    server
        .wait_state(&vs_ai, "the computer's reply", |s| moves(s).len() == 2)
        .await;
    end(&server, &vs_ai, "resign", &token).await;

    // Kept: a registered player's finished game and an anonymous game
    // still being played. An aborted anonymous game goes by this rule too,
    // though the aborted games' own retention is off here.
    let alice = server.register("alice").await;
    let (game, alice_seat) = server
        .create_game(
            json!({"white": {"kind": "human"}, "black": {"kind": "human"}, "creator": "white"}),
            Some(&alice),
        )
        .await;
    let registered = game["id"].as_str().expect("id").to_string();
    let (status, joined) = server
        .post(&format!("/api/games/{registered}/join"), None, None)
        .await;
    assert_eq!(status, 200, "{joined}");
    let joiner = joined["seat"]["token"].as_str().expect("seat").to_string();
    let alice_seat = alice_seat.expect("seat");
    play_line(
        &server,
        &registered,
        &alice_seat,
        &joiner,
        &["c2c4", "c7c5"],
    )
    .await;
    end(&server, &registered, "resign", &joiner).await;
    let (live, white, black) = server.human_game(json!({})).await;
    play_line(&server, &live, &white, &black, &["e2e4"]).await;
    let (aborted, white, _) = server.human_game(json!({})).await;
    end(&server, &aborted, "abort", &white).await;

    deleted_and_kept(
        &server,
        &[&anonymous, &vs_ai, &aborted],
        &[(&registered, 2)],
    )
    .await;
    assert_eq!(moves(&server.state(&live).await), ["e2e4"]);
    server.stop().await;
}

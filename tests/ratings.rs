//! Ratings, player pages and records (issue 11): Glicko-2 ratings change
//! only for rated games between registered players, exactly once per
//! result (a restart counts nothing again); a player's page and paged game
//! list; the scoreboard's ratings and records.

mod support;

use serde_json::{json, Value};
use support::*;

/// A human v human game: `white` creates it (with `extra` fields), `black`
/// joins; each is a player token or anonymous. Returns (id, white seat,
/// black seat).
async fn game_between(
    server: &TestServer,
    white: Option<&str>,
    black: Option<&str>,
    extra: Value,
) -> (String, String, String) {
    let mut body = json!({"white": {"kind": "human"}, "black": {"kind": "human"}, "as": "white"});
    if let (Some(body), Some(extra)) = (body.as_object_mut(), extra.as_object()) {
        body.extend(extra.clone());
    }
    let (game, white_seat) = server.create_game(body, white).await;
    let id = game["id"].as_str().expect("id").to_string();
    let (status, joined) = server
        .post(&format!("/api/games/{id}/join"), black, None)
        .await;
    assert_eq!(status, 200, "join: {joined}");
    let black_seat = joined["seat"]["token"].as_str().expect("seat").to_string();
    (id, white_seat.expect("white seat"), black_seat)
}

/// Plays `moves` alternately from white.
async fn play_all(server: &TestServer, id: &str, seats: [&str; 2], moves: &[&str]) -> Value {
    let mut state = Value::Null;
    for (ply, uci) in moves.iter().enumerate() {
        state = server.play(id, seats[ply % 2], uci).await;
    }
    state
}

/// Fool's mate: black mates on its second move.
const FOOLS_MATE: [&str; 4] = ["f2f3", "e7e5", "g2g4", "d8h4"];
/// Scholar's mate: white mates on its fourth move.
const SCHOLARS_MATE: [&str; 7] = ["e2e4", "e7e5", "d1h5", "b8c6", "f1c4", "g8f6", "h5f7"];

async fn profile(server: &TestServer, name: &str) -> Value {
    let (status, profile) = server.get(&format!("/api/players/{name}")).await;
    assert_eq!(status, 200, "{profile}");
    profile
}

fn rating_of(profile: &Value) -> (i64, i64) {
    (
        profile["rating"].as_i64().expect("rating"),
        profile["rating_deviation"]
            .as_i64()
            .expect("rating_deviation"),
    )
}

#[tokio::test]
async fn a_rated_game_between_registered_players_rates_both() {
    let db = TestDb::new();
    let server = TestServer::start(test_config(&db)).await;
    let alice = server.register("alice").await;
    let bob = server.register("bob").await;
    let fresh = profile(&server, "alice").await;
    assert_eq!(rating_of(&fresh), (1500, 350));
    assert_eq!(fresh["provisional"], true);
    assert_eq!(fresh["history"], json!([]));

    let (id, white, black) = game_between(&server, Some(&alice), Some(&bob), json!({})).await;
    let live = server.state(&id).await;
    assert_eq!(live["white"]["rating"], 1500, "{live}");
    assert_eq!(live["white"]["provisional"], true);
    assert_eq!(live["black"]["rating"], 1500);
    let end = play_all(&server, &id, [&white, &black], &FOOLS_MATE).await;
    assert_eq!(end["result"], "0-1");

    // Glicko-2 from 1500/350 each: the winner gains what the loser loses
    // (162 points) and both become more certain (RD 290).
    let alice_now = profile(&server, "alice").await;
    let bob_now = profile(&server, "BOB").await;
    assert_eq!(rating_of(&alice_now), (1338, 290), "{alice_now}");
    assert_eq!(rating_of(&bob_now), (1662, 290), "{bob_now}");
    assert_eq!(bob_now["name"], "bob", "names ignore case, shown as chosen");
    assert_eq!(
        (
            &alice_now["games"],
            &alice_now["wins"],
            &alice_now["losses"],
            &alice_now["draws"]
        ),
        (&json!(1), &json!(0), &json!(1), &json!(0))
    );
    let point = &alice_now["history"][0];
    assert_eq!(alice_now["history"].as_array().map(Vec::len), Some(1));
    assert_eq!(
        (
            &point["game"],
            &point["opponent"],
            &point["result"],
            &point["before"],
            &point["after"]
        ),
        (
            &json!(id),
            &json!("bob"),
            &json!("loss"),
            &json!(1500),
            &json!(1338)
        )
    );
    assert_eq!(bob_now["history"][0]["result"], "win");

    // The finished game's header shows the ratings the players had before
    // it, from the stored game as from the live one.
    let finished = server.state(&id).await;
    assert_eq!(finished["white"]["rating"], 1500, "{finished}");
    assert_eq!(finished["black"]["rating"], 1500);

    let (_, board) = server.get("/api/scoreboard").await;
    let players = board["players"].as_array().expect("players");
    let row = |name: &str| {
        players
            .iter()
            .find(|p| p["name"] == name)
            .cloned()
            .expect(name)
    };
    assert_eq!(row("bob")["rating"], 1662);
    assert_eq!(row("bob")["rating_deviation"], 290);
    assert_eq!(row("bob")["provisional"], true);
    assert_eq!(row("alice")["rating"], 1338);

    // A game after this one shows the new rating on its seat.
    let (next, _, _) = game_between(&server, Some(&bob), Some(&alice), json!({})).await;
    let state = server.state(&next).await;
    assert_eq!(state["white"]["rating"], 1662);
    assert_eq!(state["black"]["rating"], 1338);
    server.stop().await;
}

#[tokio::test]
async fn only_rated_games_between_registered_players_change_a_rating() {
    let db = TestDb::new();
    let server = TestServer::start(test_config(&db)).await;
    let alice = server.register("alice").await;
    let bob = server.register("bob").await;

    // Against an anonymous player: counted on the scoreboard, not rated.
    let (id, white, black) = game_between(&server, Some(&alice), None, json!({})).await;
    play_all(&server, &id, [&white, &black], &FOOLS_MATE).await;
    let anonymous = server.state(&id).await;
    assert!(anonymous["black"].get("rating").is_none(), "{anonymous}");
    // Against the computer: resigning is a loss, not rated.
    let (game, seat) = server
        .create_game(
            json!({"white": {"kind": "human"}, "black": {"kind": "ai", "level": 1}}),
            Some(&alice),
        )
        .await;
    let ai_game = game["id"].as_str().expect("id");
    let seat = seat.expect("seat");
    let (status, _) = server
        .post(&format!("/api/games/{ai_game}/resign"), Some(&seat), None)
        .await;
    assert_eq!(status, 200);
    // A casual game (custom start) between registered players: not rated.
    let (casual, white, black) = game_between(
        &server,
        Some(&alice),
        Some(&bob),
        json!({"fen": "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 2"}),
    )
    .await;
    play_all(&server, &casual, [&white, &black], &FOOLS_MATE).await;
    // A clock under a minute: casual too.
    let (blitz, white, black) = game_between(
        &server,
        Some(&alice),
        Some(&bob),
        json!({"clock": {"initial": 30, "increment": 0}}),
    )
    .await;
    play_all(&server, &blitz, [&white, &black], &FOOLS_MATE).await;

    let alice_now = profile(&server, "alice").await;
    assert_eq!(rating_of(&alice_now), (1500, 350), "{alice_now}");
    assert_eq!(alice_now["history"], json!([]));
    // The two rated games count on the scoreboard (the casual ones do not).
    assert_eq!(alice_now["games"], 2, "{alice_now}");
    assert_eq!(alice_now["losses"], 2);
    assert_eq!(rating_of(&profile(&server, "bob").await), (1500, 350));
    server.stop().await;
}

#[tokio::test]
async fn a_result_counts_once_across_restarts() {
    let db = TestDb::new();
    let server = TestServer::start(test_config(&db)).await;
    let alice = server.register("alice").await;
    let bob = server.register("bob").await;
    let (id, white, black) = game_between(&server, Some(&alice), Some(&bob), json!({})).await;
    play_all(&server, &id, [&white, &black], &FOOLS_MATE).await;
    let before = (
        profile(&server, "alice").await,
        profile(&server, "bob").await,
        server.get("/api/scoreboard").await.1,
    );
    // Acting on the finished game changes nothing.
    let answer = server
        .post(&format!("/api/games/{id}/resign"), Some(&white), None)
        .await;
    assert_error(&answer, 409, "game_over");
    server.stop().await;

    for _ in 0..2 {
        let server = TestServer::start(test_config(&db)).await;
        // The game loads again (the PGN reads it through the actor).
        let (status, _, _) = server.get_text(&format!("/api/games/{id}/pgn")).await;
        assert_eq!(status, 200);
        let after = (
            profile(&server, "alice").await,
            profile(&server, "bob").await,
            server.get("/api/scoreboard").await.1,
        );
        assert_eq!(after, before);
        server.stop().await;
    }
}

fn ids(list: &Value) -> Vec<String> {
    list["games"]
        .as_array()
        .expect("games")
        .iter()
        .map(|game| game["id"].as_str().expect("id").to_string())
        .collect()
}

#[tokio::test]
async fn a_players_games_are_paged_newest_first() {
    let db = TestDb::new();
    let server = TestServer::start(test_config(&db)).await;
    let alice = server.register("alice").await;
    let bob = server.register("bob").await;
    let carol = server.register("carol").await;
    // Alice plays five games, white and black; bob and carol one without her.
    let mut hers = Vec::new();
    for round in 0..5 {
        let (id, _, _) = if round % 2 == 0 {
            game_between(&server, Some(&alice), Some(&bob), json!({})).await
        } else {
            game_between(&server, Some(&carol), Some(&alice), json!({})).await
        };
        hers.push(id);
    }
    let (other, white, black) = game_between(&server, Some(&bob), Some(&carol), json!({})).await;
    play_all(&server, &other, [&white, &black], &FOOLS_MATE).await;
    hers.reverse();

    let mut listed = Vec::new();
    let mut path = "/api/players/alice/games?limit=2".to_string();
    let mut pages = Vec::new();
    loop {
        let (status, page) = server.get(&path).await;
        assert_eq!(status, 200, "{page}");
        pages.push(ids(&page).len());
        listed.extend(ids(&page));
        match page["next"].as_str() {
            Some(next) => path = format!("/api/players/alice/games?limit=2&before={next}"),
            None => {
                assert_eq!(page["next"], Value::Null, "the last page says so");
                break;
            }
        }
    }
    assert_eq!(pages, vec![2, 2, 1]);
    assert_eq!(listed, hers, "every game once, newest first");

    // The game list filtered by player, with the list's own filters.
    let (status, all) = server.get("/api/games?player=Alice&limit=100").await;
    assert_eq!(status, 200, "{all}");
    assert_eq!(ids(&all), hers);
    let (_, finished) = server.get("/api/games?player=bob&status=finished").await;
    assert_eq!(ids(&finished), vec![other.clone()]);
    let (_, active) = server.get("/api/games?player=bob&status=active").await;
    assert_eq!(active["games"].as_array().map(Vec::len), Some(3));
    let (_, lost) = server.get("/api/games?player=carol&status=finished").await;
    assert_eq!(ids(&lost), vec![other]);

    let refused: [(&str, u16, &str); 7] = [
        ("/api/players/nobody", 404, "not_found"),
        ("/api/players/no%20such%20name", 404, "not_found"),
        ("/api/players/nobody/games", 404, "not_found"),
        ("/api/games?player=nobody", 404, "not_found"),
        (
            "/api/players/alice/games?before=yesterday",
            400,
            "bad_request",
        ),
        ("/api/players/alice/games?limit=0", 400, "bad_request"),
        ("/api/games?before=1.x", 400, "bad_request"),
    ];
    for (path, status, code) in refused {
        let answer = server.get(path).await;
        assert_error(&answer, status, code);
    }
    server.stop().await;
}

fn record<'a>(board: &'a Value, name: &str) -> &'a Value {
    board["records"]
        .as_array()
        .expect("records")
        .iter()
        .find(|r| r["record"] == name)
        .unwrap_or_else(|| panic!("no {name} in {board}"))
}

#[tokio::test]
async fn records_follow_the_results() {
    let db = TestDb::new();
    let server = TestServer::start(test_config(&db)).await;
    let (_, board) = server.get("/api/scoreboard").await;
    assert_eq!(board["records"], json!([]), "no results, no records");
    let alice = server.register("alice").await;
    let bob = server.register("bob").await;

    // 1. Bob mates alice in 2: bob 1662, alice 1338.
    let (first, white, black) = game_between(&server, Some(&alice), Some(&bob), json!({})).await;
    play_all(&server, &first, [&white, &black], &FOOLS_MATE).await;
    // 2. Alice, 1337.7 to 1662.3 (325 points) below, beats bob (he resigns
    //    after 3 moves).
    let (upset, white, black) = game_between(&server, Some(&alice), Some(&bob), json!({})).await;
    play_all(
        &server,
        &upset,
        [&white, &black],
        &["e2e4", "e7e5", "g1f3", "b8c6", "f1c4", "g8f6"],
    )
    .await;
    let (status, _) = server
        .post(&format!("/api/games/{upset}/resign"), Some(&black), None)
        .await;
    assert_eq!(status, 200);
    // 3. Alice mates bob in 4: a second win in a row, not a faster mate.
    let (third, white, black) = game_between(&server, Some(&alice), Some(&bob), json!({})).await;
    play_all(&server, &third, [&white, &black], &SCHOLARS_MATE).await;

    let (_, board) = server.get("/api/scoreboard").await;
    let names: Vec<&str> = board["records"]
        .as_array()
        .expect("records")
        .iter()
        .filter_map(|r| r["record"].as_str())
        .collect();
    assert_eq!(
        names,
        [
            "fastest_checkmate",
            "longest_game",
            "biggest_upset",
            "longest_win_streak"
        ],
        "in the documented order: {board}"
    );
    let mate = record(&board, "fastest_checkmate");
    assert_eq!(
        (
            &mate["value"],
            &mate["player"],
            &mate["opponent"],
            &mate["game"]
        ),
        (&json!(2), &json!("bob"), &json!("alice"), &json!(first))
    );
    let long = record(&board, "longest_game");
    assert_eq!(
        (&long["value"], &long["player"], &long["game"]),
        (&json!(4), &json!("alice"), &json!(third))
    );
    let upset_record = record(&board, "biggest_upset");
    assert_eq!(
        (
            &upset_record["value"],
            &upset_record["player"],
            &upset_record["opponent"],
            &upset_record["game"]
        ),
        (&json!(325), &json!("alice"), &json!("bob"), &json!(upset))
    );
    let streak = record(&board, "longest_win_streak");
    assert_eq!(
        (&streak["value"], &streak["player"], &streak["game"]),
        (&json!(2), &json!("alice"), &json!(third))
    );
    assert!(streak.get("opponent").is_none(), "{streak}");
    let alice_now = profile(&server, "alice").await;
    assert_eq!(
        (&alice_now["win_streak"], &alice_now["best_win_streak"]),
        (&json!(2), &json!(2))
    );
    let bob_now = profile(&server, "bob").await;
    assert_eq!(
        (&bob_now["win_streak"], &bob_now["best_win_streak"]),
        (&json!(0), &json!(1))
    );
    server.stop().await;
}

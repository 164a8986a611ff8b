//! Arena tournaments (issue 38), from outside through lichess's Arena and
//! Board APIs: lichess's scoring (the fire, early draws, berserk) read
//! back from the standings, refusals, the end of an arena (podium,
//! results, games export with `[Event]`), and a restart in the middle.

mod support;

use std::time::Duration;

use serde_json::{json, Value};
use support::*;

/// A person with a token of the `play` and `challenge` scopes
/// (`support::person`).
async fn player(server: &TestServer, name: &str) -> String {
    person(server, name, &["play", "challenge"]).await
}

fn fast(db: &TestDb) -> rookery_server::Config {
    let mut config = test_config(db);
    config.play.arena_wave_ms = 100;
    config
}

async fn create(server: &TestServer, token: &str, body: Value) -> (u16, Value) {
    server
        .post("/api/tournament", Some(token), Some(body))
        .await
}

async fn join(server: &TestServer, id: &str, token: &str, query: &str) -> (u16, Value) {
    server
        .post(
            &format!("/api/tournament/{id}/join{query}"),
            Some(token),
            None,
        )
        .await
}

/// `GET /api/account/playing` as the person.
async fn playing(server: &TestServer, token: &str) -> Value {
    let (status, playing) = read(
        server
            .http
            .get(server.url("/api/account/playing"))
            .bearer_auth(token)
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(status, 200, "{playing}");
    playing
}

/// The person's next active game not in `seen`: (id, colour).
async fn next_game(server: &TestServer, token: &str, seen: &mut Vec<String>) -> (String, String) {
    within(Duration::from_secs(20), "a pairing", async {
        loop {
            let playing = playing(server, token).await;
            for game in playing["nowPlaying"]
                .as_array()
                .cloned()
                .unwrap_or_default()
            {
                let id = game["gameId"].as_str().unwrap().to_string();
                if !seen.contains(&id) {
                    seen.push(id.clone());
                    return (id, game["color"].as_str().unwrap().to_string());
                }
            }
            tokio::time::sleep(Duration::from_millis(30)).await;
        }
    })
    .await
}

async fn board(server: &TestServer, token: &str, game: &str, action: &str) -> (u16, Value) {
    server
        .post(
            &format!("/api/board/game/{game}/{action}"),
            Some(token),
            None,
        )
        .await
}

async fn ok(server: &TestServer, token: &str, game: &str, action: &str) {
    let (status, answer) = board(server, token, game, action).await;
    assert_eq!(status, 200, "{action}: {answer}");
}

/// Plays `moves` (UCI) alternately, white first.
async fn play(server: &TestServer, game: &str, white: &str, black: &str, moves: &[&str]) {
    for (ply, uci) in moves.iter().enumerate() {
        let token = if ply % 2 == 0 { white } else { black };
        ok(server, token, game, &format!("move/{uci}")).await;
    }
}

/// The arena until `done` holds.
async fn arena_where(
    server: &TestServer,
    id: &str,
    what: &str,
    done: impl Fn(&Value) -> bool,
) -> Value {
    within(Duration::from_secs(30), what, async {
        loop {
            let (status, arena) = server.get(&format!("/api/tournament/{id}")).await;
            assert_eq!(status, 200, "{arena}");
            if done(&arena) {
                return arena;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    })
    .await
}

fn line<'a>(arena: &'a Value, name: &str) -> &'a Value {
    arena["standing"]["players"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["name"] == name)
        .unwrap_or_else(|| panic!("{name} in {arena}"))
}

/// 14 plies of a quiet Italian game: a berserk win needs 7 moves.
const SEVEN_MOVES: [&str; 14] = [
    "e2e4", "e7e5", "g1f3", "b8c6", "f1c4", "f8c5", "c2c3", "g8f6", "d2d3", "d7d6", "e1g1", "e8g8",
    "f1e1", "a7a6",
];

#[tokio::test]
async fn the_fire_early_draws_and_berserk_score_as_on_lichess() {
    let db = TestDb::new();
    let server = TestServer::start(fast(&db)).await;
    let ann = player(&server, "Ann").await;
    let bob = player(&server, "Bob").await;
    let (status, arena) = create(
        &server,
        &ann,
        json!({"name": "Club night", "clockTime": 3, "clockIncrement": 2, "minutes": 30,
               "waitMinutes": 0, "rated": true, "berserkable": true}),
    )
    .await;
    assert_eq!(status, 200, "{arena}");
    assert_eq!(arena["fullName"], "Club night Arena");
    assert_eq!(arena["clock"], json!({"limit": 180, "increment": 2}));
    let id = arena["id"].as_str().unwrap().to_string();
    assert_eq!(join(&server, &id, &ann, "?pairMeAsap=True").await.0, 200);
    assert_eq!(join(&server, &id, &bob, "").await.0, 200);
    let tokens = |colour: &str| {
        if colour == "white" {
            (ann.clone(), bob.clone())
        } else {
            (bob.clone(), ann.clone())
        }
    };

    let mut seen = Vec::new();
    // An arena's game names its arena where the person's games are listed
    // (and in the `gameStart` lines that open an event stream).
    let (first, _) = next_game(&server, &ann, &mut seen).await;
    seen.clear();
    let playing = playing(&server, &ann).await;
    let listed = &playing["nowPlaying"][0];
    assert_eq!(listed["gameId"], first.as_str(), "{playing}");
    assert_eq!(listed["source"], "arena", "{playing}");
    assert_eq!(listed["tournamentId"], id.as_str(), "{playing}");
    // Three wins for Ann: 2, 2, then 4 on fire.
    for _ in 0..3 {
        let (game, colour) = next_game(&server, &ann, &mut seen).await;
        let (white, black) = tokens(&colour);
        play(&server, &game, &white, &black, &["e2e4", "e7e5"]).await;
        ok(&server, &bob, &game, "resign").await;
    }
    let arena_now = arena_where(&server, &id, "three results", |a| {
        line(a, "Ann")["score"] == 8
    })
    .await;
    assert_eq!(
        line(&arena_now, "Ann")["sheet"],
        json!({"scores": "224", "fire": true})
    );
    assert_eq!(line(&arena_now, "Bob")["score"], 0);

    // An early draw (fewer than 10 moves) scores nothing and puts out the fire.
    let (game, colour) = next_game(&server, &ann, &mut seen).await;
    let (white, black) = tokens(&colour);
    play(&server, &game, &white, &black, &["e2e4", "e7e5"]).await;
    ok(&server, &ann, &game, "draw/yes").await;
    ok(&server, &bob, &game, "draw/yes").await;
    let arena_now = arena_where(&server, &id, "the early draw", |a| {
        line(a, "Ann")["sheet"]["scores"] == "2240"
    })
    .await;
    assert_eq!(line(&arena_now, "Ann")["sheet"]["fire"], false);
    assert_eq!(line(&arena_now, "Bob")["sheet"]["scores"], "0000");

    // Berserk: Bob halves his clock before his first move, wins a game of
    // seven moves, and scores 2 + 1.
    let (game, colour) = next_game(&server, &ann, &mut seen).await;
    let (white, black) = tokens(&colour);
    ok(&server, &bob, &game, "berserk").await;
    let (status, _) = board(&server, &bob, &game, "berserk").await;
    assert_eq!(status, 400, "berserk only once");
    let (_, state) = server.get(&format!("/api/games/{game}")).await;
    let bob_side = if colour == "white" { "black" } else { "white" };
    assert_eq!(state["clock"][format!("{bob_side}_ms")], 90_000, "{state}");
    play(&server, &game, &white, &black, &SEVEN_MOVES).await;
    let (status, _) = board(&server, &ann, &game, "berserk").await;
    assert_eq!(status, 400, "not after one's first move");
    // No increment for the berserk side: its clock never exceeds half.
    let (_, state) = server.get(&format!("/api/games/{game}")).await;
    assert!(
        state["clock"][format!("{bob_side}_ms")].as_u64().unwrap() <= 90_000,
        "{state}"
    );
    ok(&server, &ann, &game, "resign").await;
    let arena_now = arena_where(&server, &id, "the berserk win", |a| {
        line(a, "Bob")["score"] == 3
    })
    .await;
    assert_eq!(line(&arena_now, "Bob")["sheet"]["scores"], "00003");
    assert_eq!(line(&arena_now, "Bob")["nb"]["berserk"], 1);
    assert_eq!(line(&arena_now, "Ann")["score"], 8);
    assert_eq!(line(&arena_now, "Ann")["rank"], 1);
    assert_eq!(arena_now["stats"]["berserks"], 1);
    // The berserk game on a PGN export names the arena.
    let (_, _, pgn) = server.get_text(&format!("/api/games/{game}/pgn")).await;
    assert!(pgn.contains("[Event \"Club night Arena\"]"), "{pgn}");

    // A pause (withdraw) stops the pairings; joining again comes back.
    let (_, paused) = server
        .post(&format!("/api/tournament/{id}/withdraw"), Some(&ann), None)
        .await;
    assert_eq!(paused["ok"], true);
    let arena_now = arena_where(&server, &id, "the pause", |a| {
        line(a, "Ann")["withdraw"] == true
    })
    .await;
    assert!(arena_now["duels"].as_array().unwrap().len() <= 1);
    server.stop().await;
}

#[tokio::test]
async fn arenas_refuse_bad_input_and_check_their_conditions() {
    let db = TestDb::new();
    let mut config = fast(&db);
    config.play.arena_creators = vec!["Cleo".into()];
    let server = TestServer::start(config).await;
    let cleo = player(&server, "Cleo").await;
    let dan = player(&server, "Dan").await;
    let refused = |answer: &(u16, Value), status: u16| {
        assert_eq!(answer.0, status, "{}", answer.1);
        assert!(
            answer.1["error"].as_str().is_some_and(|e| !e.is_empty()),
            "{}",
            answer.1
        );
    };
    let good = json!({"name": "Ok", "clockTime": 1, "clockIncrement": 0, "minutes": 20});
    refused(&create(&server, &dan, good.clone()).await, 403);
    for bad in [
        json!({"clockTime": 1, "minutes": 20}),
        json!({"clockTime": 1, "clockIncrement": 0}),
        json!({"clockTime": 0, "clockIncrement": 0, "minutes": 20}),
        json!({"clockTime": 1, "clockIncrement": 0, "minutes": 20, "variant": "chess960"}),
        json!({"clockTime": 1, "clockIncrement": 0, "minutes": 20, "name": "x"}),
        json!({"clockTime": "soon", "clockIncrement": 0, "minutes": 20}),
    ] {
        refused(&create(&server, &cleo, bad).await, 400);
    }
    let (status, listed) = server.get("/api/tournament").await;
    assert_eq!(status, 200);
    assert_eq!(
        listed,
        json!({"created": [], "started": [], "finished": []})
    );
    let mut private = good.clone();
    private["password"] = json!("secret");
    private["conditions.minRating.rating"] = json!(1400);
    let (_, arena) = create(&server, &cleo, private).await;
    let id = arena["id"].as_str().unwrap();
    assert_eq!(arena["private"], true);
    refused(&join(&server, id, &dan, "").await, 403);
    refused(&join(&server, id, &dan, "?password=wrong").await, 403);
    assert_eq!(join(&server, id, &dan, "?password=secret").await.0, 200);
    refused(&server.get("/api/tournament/nosuch1").await, 404);
    refused(
        &server.get(&format!("/api/tournament/{id}?page=x")).await,
        400,
    );
    let (_, listed) = server.get("/api/tournament").await;
    assert_eq!(listed["created"][0]["id"], id);
    assert_eq!(listed["created"][0]["nbPlayers"], 1);
    server.stop().await;
}

#[tokio::test]
async fn a_finished_arena_keeps_its_podium_results_and_games() {
    let db = TestDb::new();
    let server = TestServer::start(fast(&db)).await;
    let eve = player(&server, "Eve").await;
    let fay = player(&server, "Fay").await;
    let (_, arena) = create(
        &server,
        &eve,
        json!({"name": "Blitz sprint", "clockTime": 1, "clockIncrement": 1, "minutes": 0.05,
               "waitMinutes": 0, "rated": false}),
    )
    .await;
    let id = arena["id"].as_str().unwrap().to_string();
    join(&server, &id, &eve, "").await;
    join(&server, &id, &fay, "").await;
    let mut seen = Vec::new();
    let (game, colour) = next_game(&server, &eve, &mut seen).await;
    let (white, black) = if colour == "white" {
        (&eve, &fay)
    } else {
        (&fay, &eve)
    };
    play(&server, &game, white, black, &["e2e4", "e7e5"]).await;
    ok(&server, &fay, &game, "resign").await;
    let (_, state) = server.get(&format!("/api/games/{game}")).await;
    assert_eq!(state["rated"], false, "a casual arena's games are casual");
    // The arena ends by the clock; a game still going at the end counts
    // when it ends.
    arena_where(&server, &id, "the end", |a| a["isFinished"] == true).await;
    let playing = playing(&server, &eve).await;
    for game in playing["nowPlaying"].as_array().unwrap() {
        ok(&server, &fay, game["gameId"].as_str().unwrap(), "resign").await;
    }
    let arena = arena_where(&server, &id, "the last result", |a| a["duels"] == json!([])).await;
    let podium = arena["podium"].as_array().expect("a podium");
    assert_eq!(podium[0]["name"], "Eve");
    assert_eq!(podium[1]["name"], "Fay");
    let (_, kind, results) = server
        .get_text(&format!("/api/tournament/{id}/results"))
        .await;
    assert_eq!(kind, "application/x-ndjson");
    let lines: Vec<Value> = results
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines[0]["username"], "Eve");
    assert_eq!(lines[0]["rank"], 1);
    assert_eq!(lines[1]["username"], "Fay");
    let (_, kind, pgn) = server
        .get_text(&format!("/api/tournament/{id}/games"))
        .await;
    assert_eq!(kind, "application/x-chess-pgn");
    assert!(pgn.contains("[Event \"Blitz sprint Arena\"]"), "{pgn}");
    assert!(pgn.contains(&game));
    let (_, listed) = server.get("/api/tournament").await;
    assert_eq!(listed["finished"][0]["id"], id.as_str());
    server.stop().await;
}

#[tokio::test]
async fn a_restart_in_the_middle_of_an_arena_loses_nothing() {
    let db = TestDb::new();
    let server = TestServer::start(fast(&db)).await;
    let gil = player(&server, "Gil").await;
    let hal = player(&server, "Hal").await;
    let (_, arena) = create(
        &server,
        &gil,
        json!({"name": "Long night", "clockTime": 5, "clockIncrement": 0, "minutes": 60,
               "waitMinutes": 0}),
    )
    .await;
    let id = arena["id"].as_str().unwrap().to_string();
    join(&server, &id, &gil, "").await;
    join(&server, &id, &hal, "").await;
    let mut seen = Vec::new();
    // One result before the restart, one game going through it.
    let (game, colour) = next_game(&server, &gil, &mut seen).await;
    let (white, black) = if colour == "white" {
        (&gil, &hal)
    } else {
        (&hal, &gil)
    };
    play(&server, &game, white, black, &["e2e4", "e7e5"]).await;
    ok(&server, &hal, &game, "resign").await;
    let (going, colour) = next_game(&server, &gil, &mut seen).await;
    let (white, black) = if colour == "white" {
        (gil.clone(), hal.clone())
    } else {
        (hal.clone(), gil.clone())
    };
    play(&server, &going, &white, &black, &["d2d4", "d7d5"]).await;
    server.stop().await;

    let server = TestServer::start(fast(&db)).await;
    let arena = arena_where(&server, &id, "the arena after the restart", |a| {
        a["isStarted"] == true
    })
    .await;
    assert_eq!(line(&arena, "Gil")["score"], 2);
    assert_eq!(arena["duels"][0]["id"], going.as_str());
    play(&server, &going, &white, &black, &["c2c4"]).await;
    ok(&server, &gil, &going, "resign").await;
    let arena = arena_where(&server, &id, "the result after the restart", |a| {
        line(a, "Hal")["score"] == 2
    })
    .await;
    assert_eq!(line(&arena, "Gil")["score"], 2);
    // And the director pairs them again.
    let (third, _) = next_game(&server, &gil, &mut seen).await;
    assert!(third != game && third != going);
    server.stop().await;
}

//! A new person's first hour (issue 22), from the outside: clocks wait for
//! each side's first move and a game nobody starts is aborted (counting
//! nowhere), an open seek leaves with its creator, every offer's maker
//! learns its answer, and an imported game continues with its history.

mod support;

use std::time::Duration;

use serde_json::{json, Value};
use support::*;

fn config(db: &TestDb) -> rookery_server::Config {
    let mut config = test_config(db);
    config.games.first_move_ms = 1_500;
    config.games.seek_grace_ms = 400;
    config
}

#[tokio::test]
async fn a_game_nobody_moves_in_is_aborted_and_counts_nowhere() {
    let db = TestDb::new();
    let server = TestServer::start(config(&db)).await;
    let alice = server.register("alice").await;
    let bob = server.register("bob").await;
    // An open seek at 1+0 whose creator never moves; bob joins.
    let (created, id) = server
        .create_human(
            json!({"clock": {"initial": 60, "increment": 0}}),
            Some(&alice),
        )
        .await;
    assert!(created["seat"]["token"].is_string());
    let (status, joined) = server
        .post(&format!("/api/games/{id}/join"), Some(&bob), None)
        .await;
    assert_eq!(status, 200);
    let game = &joined["game"];
    assert_eq!(game["status"], "active");
    assert_eq!(game["clock"]["running"], Value::Null, "White's clock waits");
    let left = game["first_move_ms"].as_u64().expect("the first-move wait");
    assert!(left <= 1_500 && left > 0, "{left}");
    let ended = server
        .wait_state(&id, "the first-move wait to end", |s| {
            s["status"] == "finished"
        })
        .await;
    assert_eq!(ended["termination"], "aborted");
    assert_eq!(ended["result"], Value::Null);
    assert_eq!(ended["clock"]["white_ms"], 60_000, "no time was charged");
    let (_, board) = server.get("/api/scoreboard").await;
    assert_eq!(board["players"], json!([]), "it counts for nobody");
    assert_eq!(board["colors"], json!({"white": 0, "black": 0, "draws": 0}));

    // White moves in time; Black's own wait then runs, and its clock does
    // not: both clocks stay full until each side has moved once.
    let (id, white, black) = server
        .human_game(json!({"clock": {"initial": 60, "increment": 2}}))
        .await;
    tokio::time::sleep(Duration::from_millis(600)).await;
    let after = server.play(&id, &white, "e2e4").await;
    assert_eq!(after["clock"]["white_ms"], 60_000, "free, no increment");
    assert_eq!(after["clock"]["running"], Value::Null);
    assert!(after["first_move_ms"].as_u64().is_some());
    let after = server.play(&id, &black, "e7e5").await;
    assert_eq!(after["clock"]["running"], "white");
    assert_eq!(after["first_move_ms"], Value::Null);
    // Now a pause is just thinking time: the game goes on.
    tokio::time::sleep(Duration::from_millis(1_800)).await;
    let state = server.state(&id).await;
    assert_eq!(state["status"], "active");
    assert!(state["clock"]["white_ms"].as_u64().unwrap() < 60_000);
    server.stop().await;
}

#[tokio::test]
async fn an_open_seek_leaves_the_lobby_when_its_creator_goes() {
    let db = TestDb::new();
    let server = TestServer::start(config(&db)).await;
    let (created, id) = server.create_human(json!({}), None).await;
    let token = created["seat"]["token"].as_str().unwrap().to_string();
    async fn listed(server: &TestServer) -> Vec<String> {
        let (_, list) = server.get("/api/games?status=waiting&joinable=true").await;
        list["games"]
            .as_array()
            .unwrap()
            .iter()
            .map(|g| g["id"].as_str().unwrap().to_string())
            .collect()
    }
    // A seek made over HTTP and never watched waits as before.
    let mut creator = WsClient::connect(&server, &id, Some(&token)).await;
    creator.next_state().await;
    assert!(listed(&server).await.contains(&id));
    // A reload: the socket closes and another opens within the grace.
    drop(creator);
    let mut creator = WsClient::connect(&server, &id, Some(&token)).await;
    creator.next_state().await;
    tokio::time::sleep(Duration::from_millis(800)).await;
    assert!(
        listed(&server).await.contains(&id),
        "still there after a reload"
    );
    // Gone for good: the seek is withdrawn.
    drop(creator);
    let ended = server
        .wait_state(&id, "the seek to be withdrawn", |s| {
            s["status"] == "finished"
        })
        .await;
    assert_eq!(ended["termination"], "aborted");
    assert!(!listed(&server).await.contains(&id));
    let refused = server
        .post(&format!("/api/games/{id}/join"), None, None)
        .await;
    assert_eq!(refused.0, 409, "{}", refused.1);
    server.stop().await;
}

#[tokio::test]
async fn every_offer_maker_hears_its_answer() {
    let db = TestDb::new();
    let server = TestServer::start(config(&db)).await;
    let (id, white, black) = server.human_game(json!({})).await;
    let mut offerer = WsClient::connect(&server, &id, Some(&white)).await;
    offerer.next_state().await;
    let act = |path: &'static str, token: String| {
        let url = format!("/api/games/{id}/{path}");
        let server = &server;
        async move {
            let (status, state) = server.post(&url, Some(&token), None).await;
            assert_eq!(status, 200, "{path}: {state}");
        }
    };
    let answer_seen = |state: &Value| state["offer_answer"].clone();

    act("draw", white.clone()).await;
    offerer.next_state().await;
    act("draw/decline", black.clone()).await;
    let told = offerer.next_state().await;
    assert_eq!(
        answer_seen(&told),
        json!({"offer": "draw", "by": "white", "answer": "declined"})
    );
    // The next state no longer carries it.
    server.play(&id, &white, "e2e4").await;
    let next = offerer.next_state().await;
    assert_eq!(next["offer_answer"], Value::Null);
    server.play(&id, &black, "e7e5").await;
    offerer.next_state().await;

    act("takeback", white.clone()).await;
    offerer.next_state().await;
    act("takeback/decline", black.clone()).await;
    assert_eq!(
        answer_seen(&offerer.next_state().await),
        json!({"offer": "takeback", "by": "white", "answer": "declined"})
    );
    act("takeback", white.clone()).await;
    offerer.next_state().await;
    act("takeback", black.clone()).await;
    let accepted = offerer.next_state().await;
    assert_eq!(
        answer_seen(&accepted),
        json!({"offer": "takeback", "by": "white", "answer": "accepted"})
    );
    assert_eq!(moves(&accepted), Vec::<String>::new());

    act("draw", white.clone()).await;
    offerer.next_state().await;
    act("draw/withdraw", white.clone()).await;
    assert_eq!(
        answer_seen(&offerer.next_state().await),
        json!({"offer": "draw", "by": "white", "answer": "withdrawn"})
    );
    act("resign", black.clone()).await;
    offerer.next_state().await;
    act("rematch", white.clone()).await;
    offerer.next_state().await;
    act("rematch/decline", black.clone()).await;
    assert_eq!(
        answer_seen(&offerer.next_state().await),
        json!({"offer": "rematch", "by": "white", "answer": "declined"})
    );
    server.stop().await;
}

#[tokio::test]
async fn an_imported_game_continues_with_its_history() {
    let db = TestDb::new();
    let server = TestServer::start(config(&db)).await;
    let history = [
        "e2e4", "c7c5", "g1f3", "d7d6", "d2d4", "c5d4", "f3d4", "g8f6", "b1c3", "a7a6",
    ];
    let (game, token) = server
        .create_game(
            json!({"white": {"kind": "human"}, "black": {"kind": "ai", "level": 1},
                   "moves": history, "clock": {"initial": 300, "increment": 0}}),
            None,
        )
        .await;
    let id = game["id"].as_str().unwrap().to_string();
    assert_eq!(moves(&game), history);
    assert_eq!(game["san"][9], "a6");
    assert_eq!(game["turn"], "white");
    assert_eq!(game["rated"], false);
    // The imported moves are not this game's: White's first move is free,
    // and there is nothing of White's to take back yet.
    assert_eq!(game["clock"]["running"], Value::Null);
    let token = token.expect("the human seat");
    let refused = server
        .post(&format!("/api/games/{id}/takeback"), Some(&token), None)
        .await;
    assert_error(&refused, 409, "nothing_to_take_back");
    server.play(&id, &token, "c1e3").await;
    let (_, _, pgn) = server.get_text(&format!("/api/games/{id}/pgn")).await;
    assert!(
        pgn.contains("1. e4 c5 2. Nf3 d6 3. d4 cxd4 4. Nxd4 Nf6 5. Nc3 a6 6. Be3"),
        "{pgn}"
    );
    // Restarted: the history is stored, and still not this game's.
    server.stop().await;
    let server = TestServer::start(config(&db)).await;
    let state = server.state(&id).await;
    assert_eq!(moves(&state)[..10], history);

    // Bad histories create nothing.
    for (moves, code) in [
        (json!(["e2e4", "e2e4"]), "illegal_move"),
        (json!(["e2e5"]), "illegal_move"),
        (json!(["zz"]), "illegal_move"),
        (json!("e2e4"), "bad_request"),
    ] {
        let answer = server
            .post(
                "/api/games",
                None,
                Some(
                    json!({"white": {"kind": "human"}, "black": {"kind": "human"}, "moves": moves}),
                ),
            )
            .await;
        assert_error(&answer, 400, code);
        assert!(
            answer.1["error"]["message"]
                .as_str()
                .unwrap()
                .contains("moves")
                || code == "bad_request",
            "{}",
            answer.1
        );
    }
    let mated = server
        .post(
            "/api/games",
            None,
            Some(
                json!({"white": {"kind": "human"}, "black": {"kind": "human"},
                        "moves": ["f2f3", "e7e5", "g2g4", "d8h4"]}),
            ),
        )
        .await;
    assert_error(&mated, 400, "bad_request");
    server.stop().await;
}

// ------------------------------------------------------------ issue 36

/// An open event stream (the web client keeps one on every page of a
/// logged-in person): the person is online while it is open.
async fn online_stream(server: &TestServer, token: &str) -> reqwest::Response {
    let response = server
        .http
        .get(server.url("/api/stream/event"))
        .bearer_auth(token)
        .send()
        .await
        .expect("event stream");
    assert_eq!(response.status().as_u16(), 200);
    response
}

fn names(list: &Value) -> Vec<String> {
    list["players"]
        .as_array()
        .expect("players")
        .iter()
        .map(|p| p["name"].as_str().expect("name").to_string())
        .collect()
}

async fn online_names(server: &TestServer) -> Vec<String> {
    let (status, list) = server.get("/api/online").await;
    assert_eq!(status, 200, "{list}");
    names(&list)
}

#[tokio::test]
async fn people_are_found_by_the_first_letters_of_their_name() {
    let db = TestDb::new();
    let server = TestServer::start(test_config(&db)).await;
    let carol = server.register("Carol").await;
    for name in ["caroline", "carl_x", "carlos", "dave"] {
        server.register(name).await;
    }
    // A new account with no game at all is found too.
    let (status, _) = server
        .post(
            "/api/accounts",
            None,
            Some(json!({"name": "Cara", "password": "a long and rare phrase"})),
        )
        .await;
    assert_eq!(status, 201);

    let search = |query: &'static str| {
        let server = &server;
        async move { server.get(&format!("/api/players?{query}")).await }
    };
    let (status, found) = search("prefix=car").await;
    assert_eq!(status, 200, "{found}");
    assert_eq!(
        names(&found),
        ["Cara", "carl_x", "carlos", "Carol", "caroline"]
    );
    assert_eq!(found["players"][0]["rating"], 1500);
    assert_eq!(found["players"][0]["provisional"], true);
    assert_eq!(found["players"][0]["online"], false);
    assert_eq!(
        names(&search("prefix=CAROL").await.1),
        ["Carol", "caroline"]
    );
    // `_` is a name's character, not a wildcard.
    assert_eq!(names(&search("prefix=carl_").await.1), ["carl_x"]);
    assert_eq!(
        names(&search("prefix=car&limit=2").await.1),
        ["Cara", "carl_x"]
    );
    assert_eq!(names(&search("prefix=zed").await.1), Vec::<String>::new());
    for bad in [
        "",
        "prefix=",
        "prefix=a%25",
        "prefix=a%20b",
        "prefix=abcdefghijklmnopqrstu",
        "prefix=car&limit=0",
        "prefix=car&limit=21",
        "prefix=car&limit=ten",
    ] {
        assert_error(&search(bad).await, 400, "bad_request");
    }

    // Online: while the person has a page (an event stream) open, with
    // what they play.
    assert!(online_names(&server).await.is_empty());
    let stream = online_stream(&server, &carol).await;
    assert_eq!(online_names(&server).await, ["Carol"]);
    let (_, list) = server.get("/api/online").await;
    assert_eq!(list["players"][0]["playing"], Value::Null, "in the lobby");
    assert_eq!(list["total"], 1);
    assert_eq!(search("prefix=carol").await.1["players"][0]["online"], true);
    let dave = server.register("dave2").await;
    let (_, id) = server.create_human(json!({}), Some(&carol)).await;
    let (status, _) = server
        .post(&format!("/api/games/{id}/join"), Some(&dave), None)
        .await;
    assert_eq!(status, 200);
    let (_, list) = server.get("/api/online").await;
    assert_eq!(list["players"][0]["playing"], id.as_str());
    drop(stream);
    within(WAIT, "Carol to go offline", async {
        while !online_names(&server).await.is_empty() {
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    })
    .await;
    server.stop().await;
}

/// Plays the fool's mate: black wins.
async fn fools_mate(server: &TestServer, id: &str, white: &str, black: &str) -> Value {
    for (token, uci) in [(white, "f2f3"), (black, "e7e5"), (white, "g2g4")] {
        server.play(id, token, uci).await;
    }
    server.play(id, black, "d8h4").await
}

async fn rating_of(server: &TestServer, name: &str) -> i64 {
    let (_, profile) = server.get(&format!("/api/players/{name}")).await;
    profile["rating"].as_i64().expect("rating")
}

#[tokio::test]
async fn a_game_is_rated_or_casual_as_its_creator_chose() {
    let db = TestDb::new();
    let server = TestServer::start(test_config(&db)).await;
    let alice = server.register("alice").await;
    let bob = server.register("bob").await;
    let game = |rated: Value| {
        let server = &server;
        let (alice, bob) = (alice.clone(), bob.clone());
        async move {
            let mut body =
                json!({"white": {"kind": "human"}, "black": {"kind": "human"}, "as": "white"});
            if !rated.is_null() {
                body["rated"] = rated;
            }
            let (status, created) = server.post("/api/games", Some(&alice), Some(body)).await;
            assert_eq!(status, 201, "{created}");
            let id = created["game"]["id"].as_str().unwrap().to_string();
            let (status, joined) = server
                .post(&format!("/api/games/{id}/join"), Some(&bob), None)
                .await;
            assert_eq!(status, 200, "{joined}");
            let white = created["seat"]["token"].as_str().unwrap().to_string();
            let black = joined["seat"]["token"].as_str().unwrap().to_string();
            (id, white, black, created["game"]["rated"].clone())
        }
    };

    // Casual: the result moves no rating.
    let (id, white, black, rated) = game(json!(false)).await;
    assert_eq!(rated, false);
    let end = fools_mate(&server, &id, &white, &black).await;
    assert_eq!(
        (end["result"].as_str(), end["rated"].as_bool()),
        (Some("0-1"), Some(false))
    );
    assert_eq!(rating_of(&server, "alice").await, 1500);
    assert_eq!(rating_of(&server, "bob").await, 1500);

    // What each stands to win or lose, seen before a rated game.
    let (status, stakes) = server.get_with("/api/players/bob/stakes", &alice).await;
    assert_eq!(status, 200, "{stakes}");
    assert_eq!(stakes["you"]["name"], "alice");
    assert_eq!(stakes["opponent"]["name"], "bob");
    let win = stakes["you"]["win"].as_i64().unwrap();
    let loss = stakes["you"]["loss"].as_i64().unwrap();
    assert!(win > 0 && loss < 0, "{stakes}");
    assert_eq!(
        stakes["you"]["draw"], 0,
        "equal ratings: a draw moves nothing"
    );

    // Rated, asked for: it moves both by what the stakes said.
    let (id, white, black, rated) = game(json!(true)).await;
    assert_eq!(rated, true);
    fools_mate(&server, &id, &white, &black).await;
    assert_eq!(rating_of(&server, "alice").await, 1500 + loss);
    assert!(rating_of(&server, "bob").await > 1500);
    // Not said: the rated rule, as before.
    let (_, _, _, rated) = game(Value::Null).await;
    assert_eq!(rated, true);

    // A game that cannot be rated is refused when asked for as rated.
    let (status, before) = server.get("/api/games?status=active&limit=100").await;
    assert_eq!(status, 200);
    let asked = server
        .post(
            "/api/games",
            Some(&alice),
            Some(
                json!({"white": {"kind": "human"}, "black": {"kind": "human"}, "as": "white",
                "rated": true, "clock": {"initial": 30, "increment": 0}}),
            ),
        )
        .await;
    assert_error(&asked, 400, "bad_request");
    let (_, after) = server.get("/api/games?status=active&limit=100").await;
    assert_eq!(
        before["games"].as_array().unwrap().len(),
        after["games"].as_array().unwrap().len()
    );
    assert_error(
        &server
            .post(
                "/api/games",
                None,
                Some(
                    json!({"white": {"kind": "human"}, "black": {"kind": "human"}, "rated": "yes"}),
                ),
            )
            .await,
        400,
        "bad_request",
    );

    // Stakes: only for a logged-in person, against someone else who exists.
    assert_error(
        &server.get("/api/players/bob/stakes").await,
        401,
        "unauthorized",
    );
    assert_error(
        &server.get_with("/api/players/nobody/stakes", &alice).await,
        404,
        "not_found",
    );
    assert_error(
        &server.get_with("/api/players/alice/stakes", &alice).await,
        409,
        "same_player",
    );
    server.stop().await;
}

#[tokio::test]
async fn pages_of_missing_things_answer_404_with_the_page() {
    let db = TestDb::new();
    let config = test_config(&db);
    std::fs::create_dir_all(&config.web_dir).unwrap();
    std::fs::write(
        config.web_dir.join("index.html"),
        "<!doctype html><title>Rookery</title>",
    )
    .unwrap();
    let server = TestServer::start(config).await;
    server.register("carol").await;
    let (_, id) = server.create_human(json!({}), None).await;
    for (page, expected) in [
        (format!("/games/{id}"), 200),
        (
            "/games/3f1c8a44-0000-4000-8000-000000000000".to_string(),
            404,
        ),
        ("/games/not-a-game".to_string(), 404),
        ("/games/%E0%A4%A".to_string(), 404),
        ("/players/carol".to_string(), 200),
        ("/players/CAROL".to_string(), 200),
        ("/players/nobody".to_string(), 404),
        ("/players/no%20body".to_string(), 404),
        ("/challenges/AbCd1234".to_string(), 404),
        ("/team/no-such-team".to_string(), 404),
        ("/arenas/AbCd1234".to_string(), 404),
        ("/swiss/AbCd1234".to_string(), 404),
        ("/help".to_string(), 200),
        ("/forgot-password".to_string(), 200),
        ("/reset-password".to_string(), 200),
    ] {
        let (status, content_type, body) = server.get_text(&page).await;
        assert_eq!(status, expected, "{page}");
        assert!(
            content_type.starts_with("text/html"),
            "{page}: {content_type}"
        );
        assert!(
            body.contains("<title>Rookery</title>"),
            "{page}: the page itself"
        );
    }
    server.stop().await;
}

//! Seats and the scoreboard (issue 8): a private game's free seat needs the
//! invite secret, only open seeks are listed as joinable, a registered player
//! cannot hold both seats, and casual games (custom start, a clock under the
//! minimum) stay off the main scoreboard. Every refused request leaves the
//! game as it was.

mod support;

use serde_json::{json, Value};
use support::*;

fn ids(list: &Value) -> Vec<String> {
    list["games"]
        .as_array()
        .expect("games")
        .iter()
        .map(|game| game["id"].as_str().expect("id").to_string())
        .collect()
}

/// The seat-related part of a state: what a refused join must not change.
fn seats_of(state: &Value) -> Value {
    json!([
        state["status"],
        state["white"],
        state["black"],
        state["moves"]
    ])
}

#[tokio::test]
async fn games_are_open_by_default_and_join_by_id_as_before() {
    let db = TestDb::new();
    let server = TestServer::start(test_config(&db)).await;
    let (created, id) = server.create_human(json!({}), None).await;
    assert_eq!(created["game"]["visibility"], "open");
    assert_eq!(created["game"]["joinable"], true);
    assert!(
        created.get("invite").is_none(),
        "an open game has no invite: {created}"
    );
    let (_, seeks) = server.get("/api/games?joinable=true").await;
    assert_eq!(ids(&seeks), vec![id.clone()]);

    let (status, joined) = server
        .post(&format!("/api/games/{id}/join"), None, None)
        .await;
    assert_eq!(status, 200, "{joined}");
    assert_eq!(joined["seat"]["color"], "black");
    assert_eq!(joined["game"]["joinable"], false);
    assert!(joined.get("invite").is_none());
    let (_, seeks) = server.get("/api/games?joinable=true").await;
    assert_eq!(ids(&seeks), Vec::<String>::new(), "taken: no longer a seek");
    server.stop().await;
}

#[tokio::test]
async fn a_private_game_needs_its_invite_secret() {
    let db = TestDb::new();
    let server = TestServer::start(test_config(&db)).await;
    let (created, id) = server
        .create_human(
            json!({"visibility": "private", "clock": {"initial": 300, "increment": 3}}),
            None,
        )
        .await;
    let invite = created["invite"].as_str().expect("an invite secret");
    assert_eq!(invite.len(), 64, "256 bits as hex");
    assert_ne!(Some(invite), created["seat"]["token"].as_str());
    assert_eq!(created["game"]["visibility"], "private");
    assert_eq!(created["game"]["joinable"], false);
    let before = seats_of(&server.state(&id).await);

    // Not in the public lists (issue 21: a friend game is not for
    // strangers to watch or find), never as a seek; readable by its id.
    let (_, active) = server.get("/api/games?status=active").await;
    assert!(!ids(&active).contains(&id));
    assert_eq!(server.get(&format!("/api/games/{id}")).await.0, 200);
    let (_, seeks) = server.get("/api/games?joinable=true").await;
    assert!(!ids(&seeks).contains(&id));

    let join = format!("/api/games/{id}/join");
    let refused: [(&str, Option<Value>, u16, &str); 6] = [
        ("no body", None, 403, "forbidden"),
        ("an empty object", Some(json!({})), 403, "forbidden"),
        (
            "an empty secret",
            Some(json!({"invite": ""})),
            403,
            "forbidden",
        ),
        (
            "a wrong secret",
            Some(json!({"invite": "0".repeat(64)})),
            403,
            "forbidden",
        ),
        (
            "the seat token instead",
            Some(json!({"invite": created["seat"]["token"]})),
            403,
            "forbidden",
        ),
        (
            "a secret of the wrong type",
            Some(json!({"invite": 42})),
            400,
            "bad_request",
        ),
    ];
    for (case, body, status, code) in refused {
        let answer = server.post(&join, None, body).await;
        assert_eq!(answer.0, status, "{case}: {}", answer.1);
        assert_error(&answer, status, code);
        assert_eq!(
            seats_of(&server.state(&id).await),
            before,
            "{case} changes nothing"
        );
    }
    // Malformed JSON is a bad request too.
    let response = server
        .http
        .post(server.url(&join))
        .body("{\"invite\": ")
        .send()
        .await
        .expect("POST");
    assert_error(&read(response).await, 400, "bad_request");
    assert_eq!(seats_of(&server.state(&id).await), before);

    let (status, joined) = server
        .post(&join, None, Some(json!({ "invite": invite })))
        .await;
    assert_eq!(status, 200, "{joined}");
    assert_eq!(joined["seat"]["color"], "black");
    assert_eq!(joined["game"]["status"], "active");
    // The secret opened one seat; there is none left.
    assert_error(
        &server
            .post(&join, None, Some(json!({ "invite": invite })))
            .await,
        409,
        "seat_taken",
    );
    server.stop().await;
}

#[tokio::test]
async fn the_invite_and_the_terms_survive_a_restart() {
    let db = TestDb::new();
    let server = TestServer::start(test_config(&db)).await;
    let (created, id) = server
        .create_human(
            json!({"visibility": "private", "clock": {"initial": 30, "increment": 0}}),
            None,
        )
        .await;
    let invite = created["invite"].as_str().expect("invite").to_string();
    assert_eq!(created["game"]["rated"], false);
    server.stop().await;

    let server = TestServer::start(test_config(&db)).await;
    let state = server.state(&id).await;
    assert_eq!(state["visibility"], "private");
    assert_eq!(state["rated"], false);
    let join = format!("/api/games/{id}/join");
    assert_error(&server.post(&join, None, None).await, 403, "forbidden");
    let (status, joined) = server
        .post(&join, None, Some(json!({ "invite": invite })))
        .await;
    assert_eq!(status, 200, "{joined}");
    server.stop().await;
}

#[tokio::test]
async fn a_private_game_against_the_ai_has_no_invite() {
    let db = TestDb::new();
    let server = TestServer::start(test_config(&db)).await;
    let (status, created) = server
        .post(
            "/api/games",
            None,
            Some(
                json!({"white": {"kind": "human"}, "black": {"kind": "ai", "level": 1},
                        "visibility": "private"}),
            ),
        )
        .await;
    assert_eq!(status, 201, "{created}");
    assert!(created.get("invite").is_none(), "no free seat: {created}");
    assert_eq!(created["game"]["joinable"], false);
    let answer = server
        .post(
            "/api/games",
            None,
            Some(
                json!({"white": {"kind": "human"}, "black": {"kind": "human"},
                        "visibility": "secret"}),
            ),
        )
        .await;
    assert_error(&answer, 400, "bad_request");
    server.stop().await;
}

#[tokio::test]
async fn rated_is_fixed_at_creation_by_start_and_clock() {
    let db = TestDb::new();
    let server = TestServer::start(test_config(&db)).await;
    let start = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1";
    let cases = [
        ("no clock", json!({}), true),
        (
            "1+0",
            json!({"clock": {"initial": 60, "increment": 0}}),
            true,
        ),
        (
            "59 s plus a big increment",
            json!({"clock": {"initial": 59, "increment": 30}}),
            false,
        ),
        (
            "half a millisecond",
            json!({"clock": {"initial": 0.0005}}),
            false,
        ),
        (
            "a custom start",
            json!({"fen": "4k3/8/8/8/8/8/4P3/4K3 w - - 0 1"}),
            false,
        ),
        ("the standard start as FEN", json!({ "fen": start }), true),
    ];
    for (case, extra, rated) in cases {
        let (created, _) = server.create_human(extra, None).await;
        assert_eq!(created["game"]["rated"], rated, "{case}");
    }
    server.stop().await;
}

#[tokio::test]
async fn casual_games_stay_off_the_main_scoreboard() {
    let db = TestDb::new();
    let server = TestServer::start(test_config(&db)).await;
    let alice = server.register("alice").await;
    let bob = server.register("bob").await;
    let seat = |answer: &Value| answer["seat"]["token"].as_str().expect("seat").to_string();

    // The mate farm: a custom start where white mates in one.
    let (created, id) = server
        .create_human(
            json!({"fen": "k7/8/1K6/8/8/8/8/7R w - - 0 1"}),
            Some(&alice),
        )
        .await;
    let white = seat(&created);
    let (status, _) = server
        .post(&format!("/api/games/{id}/join"), Some(&bob), None)
        .await;
    assert_eq!(status, 200);
    let mated = server.play(&id, &white, "h1h8").await;
    assert_eq!(mated["termination"], "checkmate");
    assert_eq!(mated["rated"], false);

    // A flag that falls within a second.
    let (created, id) = server
        .create_human(json!({"clock": {"initial": 0.3}}), Some(&bob))
        .await;
    let bob_white = seat(&created);
    let (status, joined) = server
        .post(&format!("/api/games/{id}/join"), Some(&alice), None)
        .await;
    assert_eq!(status, 200);
    // The clocks run once each side has made its first move.
    server.play(&id, &bob_white, "e2e4").await;
    server.play(&id, &seat(&joined), "e7e5").await;
    let flagged = server
        .wait_state(&id, "the flag to fall", |s| s["status"] == "finished")
        .await;
    assert_eq!(flagged["result"], "0-1");

    let (_, board) = server.get("/api/scoreboard").await;
    assert_eq!(board["colors"], json!({"white": 0, "black": 0, "draws": 0}));
    assert_eq!(board["players"], json!([]));
    assert_eq!(board["casual"], json!({"white": 1, "black": 1, "draws": 0}));

    // A rated game counts as before.
    let (created, id) = server.create_human(json!({}), Some(&alice)).await;
    let white = seat(&created);
    let (status, _) = server
        .post(&format!("/api/games/{id}/join"), Some(&bob), None)
        .await;
    assert_eq!(status, 200);
    let (status, _) = server
        .post(&format!("/api/games/{id}/resign"), Some(&white), None)
        .await;
    assert_eq!(status, 200);
    let (_, board) = server.get("/api/scoreboard").await;
    assert_eq!(board["colors"], json!({"white": 0, "black": 1, "draws": 0}));
    assert_eq!(
        board["players"],
        json!([
            {"name": "bob", "games": 1, "wins": 1, "losses": 0, "draws": 0,
             "rating": 1662, "rating_deviation": 290, "provisional": true},
            {"name": "alice", "games": 1, "wins": 0, "losses": 1, "draws": 0,
             "rating": 1338, "rating_deviation": 290, "provisional": true},
        ])
    );
    assert_eq!(board["casual"], json!({"white": 1, "black": 1, "draws": 0}));
    server.stop().await;
}

#[tokio::test]
async fn the_joinable_filter_is_checked() {
    let db = TestDb::new();
    let server = TestServer::start(test_config(&db)).await;
    let (_, open) = server.create_human(json!({}), None).await;
    assert_error(
        &server.get("/api/games?joinable=maybe").await,
        400,
        "bad_request",
    );
    let (_, finished_only) = server.get("/api/games?joinable=true&status=finished").await;
    assert_eq!(ids(&finished_only), Vec::<String>::new());
    let (_, all) = server.get("/api/games?joinable=false").await;
    assert_eq!(ids(&all), vec![open]);
    server.stop().await;
}

#[tokio::test]
async fn games_stored_before_the_rule_are_rated_by_it() {
    let db = TestDb::new();
    // The database as the release before this rule left it: only the first
    // migration, with three finished games in it.
    let first = tempfile::tempdir().expect("temporary directory");
    std::fs::copy(
        concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../migrations/0001_initial.sql"
        ),
        first.path().join("0001_initial.sql"),
    )
    .expect("copy the first migration");
    let options = db
        .url()
        .parse::<sqlx::sqlite::SqliteConnectOptions>()
        .expect("database URL")
        .create_if_missing(true);
    let pool = sqlx::SqlitePool::connect_with(options)
        .await
        .expect("open the database");
    sqlx::migrate::Migrator::new(first.path())
        .await
        .expect("the first migration")
        .run(&pool)
        .await
        .expect("run it");
    let start = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1";
    let old_games = [
        ("00000000-0000-4000-8000-000000000001", start, None, "1-0"),
        (
            "00000000-0000-4000-8000-000000000002",
            "k7/8/1K6/8/8/8/8/7R w - - 0 1",
            None,
            "0-1",
        ),
        (
            "00000000-0000-4000-8000-000000000003",
            start,
            Some(30_000),
            "1/2-1/2",
        ),
    ];
    for (id, fen, clock, result) in old_games {
        sqlx::query(
            "INSERT INTO games (id, white_kind, black_kind, initial_fen, clock_initial_ms,
                 clock_increment_ms, status, result, termination, created_at, updated_at)
             VALUES (?, 'human', 'human', ?, ?, ?, 'finished', ?, 'resignation', 1, 1)",
        )
        .bind(id)
        .bind(fen)
        .bind(clock)
        .bind(clock.map(|_| 0))
        .bind(result)
        .execute(&pool)
        .await
        .expect("an old game");
    }
    pool.close().await;

    let server = TestServer::start(test_config(&db)).await;
    for (id, rated) in [
        ("00000000-0000-4000-8000-000000000001", true),
        ("00000000-0000-4000-8000-000000000002", false),
        ("00000000-0000-4000-8000-000000000003", false),
    ] {
        let state = server.state(id).await;
        assert_eq!(state["rated"], rated, "{id}");
        assert_eq!(state["visibility"], "open", "{id}");
    }
    let (_, board) = server.get("/api/scoreboard").await;
    assert_eq!(board["colors"], json!({"white": 1, "black": 0, "draws": 0}));
    assert_eq!(board["casual"], json!({"white": 0, "black": 1, "draws": 1}));
    server.stop().await;
}

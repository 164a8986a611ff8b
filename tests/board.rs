//! The analysis board's routes (issue 36), against the real server on port
//! 0 with a temporary database: `POST /api/position` (a position's rules
//! from a FEN and moves, Chess960 castling included) and `POST
//! /api/analysis` (the engine's evaluation and line, within the analysis
//! limits: its node budget, the evaluations a client may have in progress,
//! the per-client rate); bad FENs, illegal moves and bad bodies refused
//! with nothing changed; "continue from here" by `POST /api/games` with the
//! editor's FEN, which the engine validates too.

mod support;

use serde_json::{json, Value};
use support::{assert_error, TestDb, TestServer};

fn config(db: &TestDb, nodes: u64) -> rookery_server::Config {
    let mut config = support::test_config(db);
    config.ai.analysis_nodes = nodes;
    config
}

async fn position(server: &TestServer, body: Value) -> (u16, Value) {
    server.post("/api/position", None, Some(body)).await
}

async fn evaluate(server: &TestServer, body: Value) -> (u16, Value) {
    server.post("/api/analysis", None, Some(body)).await
}

fn strings(value: &Value) -> Vec<String> {
    value
        .as_array()
        .expect("an array")
        .iter()
        .map(|item| item.as_str().expect("a string").to_string())
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_position_is_read_with_its_legal_moves_and_its_end() {
    let db = TestDb::new();
    let server = TestServer::start(config(&db, 5_000)).await;

    // The standard start, then moves: SAN, turn, legal moves.
    let (status, start) = position(&server, json!({ "moves": ["e2e4", "e7e5", "g1f3"] })).await;
    assert_eq!(status, 200, "{start}");
    assert_eq!(start["turn"], "black");
    assert_eq!(strings(&start["san"]), ["e4", "e5", "Nf3"]);
    assert_eq!(start["check"], false);
    assert_eq!(start["outcome"], Value::Null);
    let legal = strings(&start["legal_moves"]);
    assert_eq!(legal.len(), 29, "{legal:?}");
    assert!(legal.contains(&"b8c6".to_string()));

    // A position set up by hand: mate on the board, no legal move.
    let (status, mated) = position(
        &server,
        json!({ "fen": "6k1/5ppp/8/8/8/8/5PPP/3R2K1 w - - 0 1", "moves": ["d1d8"] }),
    )
    .await;
    assert_eq!(status, 200, "{mated}");
    assert_eq!(mated["check"], true);
    assert_eq!(mated["outcome"]["result"], "1-0");
    assert_eq!(mated["outcome"]["termination"], "checkmate");
    assert_eq!(strings(&mated["legal_moves"]).len(), 0);
    assert_eq!(strings(&mated["san"]), ["Rd8#"]);

    // Chess960 castling rights naming their rooks (Shredder-FEN), and the
    // king taking its own rook to castle.
    let fen960 = "rk5r/8/8/8/8/8/8/RK5R w HAha - 0 1";
    let (status, chess960) =
        position(&server, json!({ "fen": fen960, "variant": "chess960" })).await;
    assert_eq!(status, 200, "{chess960}");
    assert_eq!(chess960["variant"], "chess960");
    let legal = strings(&chess960["legal_moves"]);
    assert!(legal.contains(&"b1a1".to_string()), "{legal:?}");
    assert!(legal.contains(&"b1h1".to_string()), "{legal:?}");
    let (status, castled) = position(
        &server,
        json!({ "fen": fen960, "variant": "chess960", "moves": ["b1h1"] }),
    )
    .await;
    assert_eq!(status, 200, "{castled}");
    assert_eq!(strings(&castled["san"]), ["O-O"]);
    assert!(
        castled["fen"]
            .as_str()
            .expect("fen")
            .starts_with("rk5r/8/8/8/8/8/8/R4RK1 b"),
        "{castled}"
    );
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_positions_and_illegal_moves_are_refused() {
    let db = TestDb::new();
    let server = TestServer::start(config(&db, 5_000)).await;
    for route in ["/api/position", "/api/analysis"] {
        let refused = |body: Value| {
            let server = &server;
            async move { server.post(route, None, Some(body)).await }
        };
        // Not a FEN, two white kings, a pawn on the back rank, the side not
        // to move in check, castling without its rook.
        for fen in [
            "hello",
            "4k3/8/8/8/8/8/8/3KK3 w - - 0 1",
            "P3k3/8/8/8/8/8/8/4K3 w - - 0 1",
            "4k3/4Q3/8/8/8/8/8/4K3 w - - 0 1",
            "4k3/8/8/8/8/8/8/4K3 w K - 0 1",
        ] {
            let answer = refused(json!({ "fen": fen })).await;
            assert_error(&answer, 400, "bad_request");
            assert!(
                answer.1["error"]["message"]
                    .as_str()
                    .expect("message")
                    .starts_with("bad fen"),
                "{}",
                answer.1
            );
        }
        // Illegal moves name the first bad one.
        let answer = refused(json!({ "moves": ["e2e4", "e2e4"] })).await;
        assert_error(&answer, 400, "illegal_move");
        assert!(
            answer.1["error"]["message"]
                .as_str()
                .expect("message")
                .contains("move 2"),
            "{}",
            answer.1
        );
        assert_error(
            &refused(json!({ "moves": ["zz"] })).await,
            400,
            "illegal_move",
        );
        // A move after the end of the game.
        assert_error(
            &refused(json!({ "fen": "6k1/5ppp/8/8/8/8/5PPP/3R2K1 w - - 0 1", "moves": ["d1d8", "g8h8"] })).await,
            400,
            "illegal_move",
        );
        // Bodies: an unknown field, a wrong type, an unknown variant, a
        // Chess960 position without its FEN, too many moves.
        assert_error(
            &refused(json!({ "fen": "x", "depth": 99 })).await,
            400,
            "bad_request",
        );
        assert_error(
            &refused(json!({ "moves": "e2e4" })).await,
            400,
            "bad_request",
        );
        assert_error(
            &refused(json!({ "variant": "atomic" })).await,
            400,
            "bad_request",
        );
        assert_error(
            &refused(json!({ "variant": "chess960" })).await,
            400,
            "bad_request",
        );
        let many: Vec<&str> = ["g1f3", "g8f6", "f3g1", "f6g8"]
            .iter()
            .copied()
            .cycle()
            .take(1001)
            .collect();
        assert_error(&refused(json!({ "moves": many })).await, 400, "bad_request");
    }
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_engine_evaluates_any_position_within_the_analysis_limits() {
    let db = TestDb::new();
    let server = TestServer::start(config(&db, 20_000)).await;

    // White mates in one: the line starts with the mate.
    let (status, mate) = evaluate(
        &server,
        json!({ "fen": "6k1/5ppp/8/8/8/8/5PPP/3R2K1 w - - 0 1" }),
    )
    .await;
    assert_eq!(status, 200, "{mate}");
    assert_eq!(mate["mate"], 1, "{mate}");
    assert_eq!(mate["cp"], Value::Null);
    assert_eq!(mate["best"], "d1d8");
    assert_eq!(mate["best_san"], "Rd8#");
    assert_eq!(strings(&mate["line"])[0], "d1d8");
    assert_eq!(mate["nodes_limit"], 20_000);
    assert!(mate["nodes"].as_u64().expect("nodes") > 0, "{mate}");

    // Black to move and a queen up: the evaluation is White's point of
    // view, so strongly negative; the line is legal SAN from the position.
    let (status, black) =
        evaluate(&server, json!({ "fen": "3qk3/8/8/8/8/8/8/4K3 b - - 0 1" })).await;
    assert_eq!(status, 200, "{black}");
    assert!(
        black["cp"].as_i64().is_some_and(|cp| cp < -500)
            || black["mate"].as_i64().is_some_and(|n| n < 0),
        "{black}"
    );
    assert_eq!(
        strings(&black["line"]).len(),
        strings(&black["line_san"]).len()
    );
    assert!(black["depth"].as_u64().expect("depth") >= 1);

    // A finished position: no line, mate 0.
    let (status, over) = evaluate(
        &server,
        json!({ "fen": "6k1/5ppp/8/8/8/8/5PPP/3R2K1 w - - 0 1", "moves": ["d1d8"] }),
    )
    .await;
    assert_eq!(status, 200, "{over}");
    assert_eq!(over["mate"], 0);
    assert_eq!(over["best"], Value::Null);
    assert_eq!(strings(&over["line"]).len(), 0);
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_is_held_to_its_rate() {
    let db = TestDb::new();
    let mut config = config(&db, 1_000);
    config.ai.board_analyses_per_minute = 3;
    let server = TestServer::start(config).await;
    for _ in 0..3 {
        let (status, body) = evaluate(&server, json!({})).await;
        assert_eq!(status, 200, "{body}");
    }
    let refused = evaluate(&server, json!({})).await;
    assert_error(&refused, 429, "rate_limited");
    assert!(
        refused.1["error"]["message"]
            .as_str()
            .expect("message")
            .contains("3 analysis board evaluations a minute"),
        "{}",
        refused.1
    );
    // The rules of a position are not the engine's work: not counted.
    let (status, _) = position(&server, json!({})).await;
    assert_eq!(status, 200);
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_game_continues_from_the_editors_position() {
    let db = TestDb::new();
    let server = TestServer::start(config(&db, 5_000)).await;
    // The editor's position, against the computer: the engine validates
    // it, and the game starts there, casual.
    let fen = "4k3/8/8/8/8/8/4P3/4K3 w - - 0 1";
    let (status, created) = server
        .post(
            "/api/games",
            None,
            Some(json!({ "white": { "kind": "human" }, "black": { "kind": "ai", "level": 1 }, "as": "white", "fen": fen })),
        )
        .await;
    assert_eq!(status, 201, "{created}");
    assert_eq!(created["game"]["initial_fen"], fen);
    assert_eq!(created["game"]["rated"], false);
    // An impossible one is refused, and no game is made.
    let (status, refused) = server
        .post(
            "/api/games",
            None,
            Some(json!({ "white": { "kind": "human" }, "black": { "kind": "ai", "level": 1 }, "as": "white", "fen": "4k3/8/8/8/8/8/8/4KK2 w - - 0 1" })),
        )
        .await;
    assert_eq!(status, 400, "{refused}");
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_request_given_up_stops_its_search() {
    let db = TestDb::new();
    // A budget no search reaches, and one evaluation in progress per
    // client: the second request is refused while the first one searches,
    // and is served once the first one's client has gone away.
    let mut config = config(&db, 1_000_000_000_000);
    config.ai.max_analyses_per_client = 1;
    config.ai.board_analyses_per_minute = 1_000_000;
    let server = TestServer::start(config).await;
    let impatient = reqwest::Client::builder()
        .timeout(std::time::Duration::from_millis(1_500))
        .build()
        .expect("client");
    let search = || {
        tokio::spawn(
            impatient
                .post(server.url("/api/analysis"))
                .json(&json!({}))
                .send(),
        )
    };
    let mut first = search();
    // While it searches, the client's share is taken. (A probe that came
    // first holds the place for a moment, and the search is refused: it
    // is sent again.)
    let busy = support::within(
        std::time::Duration::from_secs(30),
        "the first search to start",
        async {
            loop {
                if first.is_finished() {
                    first = search();
                }
                let answer = probe(&server).await;
                if answer.0 == 429 {
                    return answer;
                }
                tokio::time::sleep(std::time::Duration::from_millis(20)).await;
            }
        },
    )
    .await;
    assert!(
        busy.1["error"]["message"]
            .as_str()
            .expect("message")
            .contains("in progress"),
        "{}",
        busy.1
    );
    assert!(
        first.await.expect("task").is_err(),
        "the first request timed out"
    );
    // Gone: its search stopped and its place is free (a finished position
    // needs no search, so this answers at once).
    let done = answered_with(&server, 200, "the place to be given back").await;
    assert_eq!(done.1["mate"], 0, "{}", done.1);
    server.stop().await;
}

/// The evaluation of a finished position: no search of its own.
async fn probe(server: &TestServer) -> (u16, Value) {
    evaluate(
        server,
        json!({ "fen": "6k1/5ppp/8/8/8/8/5PPP/3R2K1 w - - 0 1", "moves": ["d1d8"] }),
    )
    .await
}

/// Probes until the server answers `status`.
async fn answered_with(server: &TestServer, status: u16, what: &str) -> (u16, Value) {
    support::within(std::time::Duration::from_secs(30), what, async {
        loop {
            let answer = probe(server).await;
            if answer.0 == status {
                return answer;
            }
            tokio::time::sleep(std::time::Duration::from_millis(20)).await;
        }
    })
    .await
}

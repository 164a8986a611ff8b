//! Post-game analysis, the PGN export with analysis, and PGN import
//! (issue 11), against the real server on port 0 with a temporary database.

mod support;

use std::time::Duration;

use serde_json::{json, Value};
use support::{assert_error, within, TestDb, TestServer};

/// A game with a blunder: 3... Nf6?? allows 4. Qxf7#.
const SCHOLARS_MATE: [&str; 7] = ["e2e4", "e7e5", "d1h5", "b8c6", "f1c4", "g8f6", "h5f7"];

/// A longer game, resigned by black (no mate at the end).
const ITALIAN: [&str; 10] = [
    "e2e4", "e7e5", "g1f3", "b8c6", "f1c4", "g8f6", "f3g5", "d7d5", "e4d5", "c6a5",
];

const WAIT: Duration = Duration::from_secs(120);

async fn play_game(server: &TestServer, moves: &[&str], resign: bool) -> String {
    let (id, white, black) = server.human_game(json!({})).await;
    for (ply, uci) in moves.iter().enumerate() {
        let token = if ply % 2 == 0 { &white } else { &black };
        server.play(&id, token, uci).await;
    }
    if resign {
        let token = if moves.len() % 2 == 0 { &white } else { &black };
        let (status, state) = server
            .post(&format!("/api/games/{id}/resign"), Some(token), None)
            .await;
        assert_eq!(status, 200, "{state}");
    }
    id
}

async fn analysis(server: &TestServer, id: &str) -> Value {
    let (status, body) = server.get(&format!("/api/games/{id}/analysis")).await;
    assert_eq!(status, 200, "{body}");
    body
}

async fn wait_analysis(server: &TestServer, id: &str, done: impl Fn(&Value) -> bool) -> Value {
    within(WAIT, "the analysis", async {
        loop {
            let body = analysis(server, id).await;
            if done(&body) {
                return body;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    })
    .await
}

fn config(db: &TestDb, nodes: u64) -> rookery_server::Config {
    let mut config = support::test_config(db);
    config.ai.analysis_nodes = nodes;
    config
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_finished_game_is_analysed_with_judgements_and_acpl() {
    let db = TestDb::new();
    let server = TestServer::start(config(&db, 20_000)).await;
    let id = play_game(&server, &SCHOLARS_MATE, false).await;

    let before = analysis(&server, &id).await;
    assert_eq!(before["status"], "none");
    assert_eq!(before["progress"]["total"], 8);

    let (status, started) = server
        .post(&format!("/api/games/{id}/analysis"), None, None)
        .await;
    assert!(status == 202 || status == 200, "{status} {started}");
    let done = wait_analysis(&server, &id, |body| body["status"] == "done").await;
    assert_eq!(done["progress"]["done"], 8, "{done}");
    assert_eq!(done["nodes_per_ply"], 20_000);
    let positions = done["positions"].as_array().expect("positions");
    assert_eq!(positions.len(), 8);
    // The start is about level; after 3... Nf6?? White mates in one; the
    // last position is checkmate (the side to move, Black, is mated).
    assert!(
        positions[0]["cp"].as_i64().expect("cp").abs() < 100,
        "{done}"
    );
    assert_eq!(positions[6]["mate"], 1, "{done}");
    assert_eq!(positions[6]["best"], "h5f7");
    assert_eq!(positions[7]["mate"], 0);
    assert_eq!(positions[7]["best"], Value::Null);

    let moves = done["moves"].as_array().expect("moves");
    assert_eq!(moves.len(), 7, "{done}");
    let blunder = &moves[5];
    assert_eq!(blunder["ply"], 6);
    assert_eq!(blunder["judgement"], "blunder", "{done}");
    assert_ne!(blunder["best"], "g8f6");
    assert!(blunder["best_san"]
        .as_str()
        .is_some_and(|san| !san.is_empty()));
    // The mate itself was the best move: no loss.
    assert_eq!(moves[6]["loss"], 0);
    assert_eq!(moves[6]["judgement"], Value::Null);
    let acpl = &done["acpl"];
    assert!(
        acpl["black"].as_i64().expect("black acpl") > acpl["white"].as_i64().expect("white acpl"),
        "{done}"
    );

    // Asking again answers the stored analysis: 200, same results.
    let (status, again) = server
        .post(&format!("/api/games/{id}/analysis"), None, None)
        .await;
    assert_eq!(status, 200);
    assert_eq!(again["positions"], done["positions"]);

    // The PGN with the analysis as comments; without it, as before.
    let (status, _, pgn) = server
        .get_text(&format!("/api/games/{id}/pgn?analysis=1"))
        .await;
    assert_eq!(status, 200);
    assert!(
        pgn.contains("Nf6?? { [%eval #1] Blunder. Best move was "),
        "{pgn}"
    );
    assert!(pgn.contains("1. e4 { [%eval "), "{pgn}");
    let (_, _, plain) = server.get_text(&format!("/api/games/{id}/pgn")).await;
    assert!(
        !plain.contains('{') && plain.contains("Nf6 4. Qxf7#"),
        "{plain}"
    );
    assert_error(
        &server
            .get(&format!("/api/games/{id}/pgn?analysis=maybe"))
            .await,
        400,
        "bad_request",
    );
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn analysis_errors_are_clear_and_change_nothing() {
    let db = TestDb::new();
    let server = TestServer::start(config(&db, 1_000)).await;
    let (id, _, _) = server.human_game(json!({})).await;
    let answer = server
        .post(&format!("/api/games/{id}/analysis"), None, None)
        .await;
    assert_error(&answer, 409, "not_finished");
    assert_eq!(analysis(&server, &id).await["status"], "none");
    for path in [
        "/api/games/00000000-0000-0000-0000-000000000000/analysis",
        "/api/games/not-a-game/analysis",
    ] {
        assert_error(&server.post(path, None, None).await, 404, "not_found");
        assert_error(&server.get(path).await, 404, "not_found");
    }
    server.stop().await;
}

/// One thread for every search, a long analysis holding it: a human's AI
/// opponent still answers (the analysis is preempted), a second analysis
/// from the same client is refused, and shutting down stops the job.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn analysis_yields_to_games_and_is_capped_per_client() {
    let db = TestDb::new();
    let mut config = config(&db, 50_000_000);
    config.ai.ai_threads = Some(1);
    config.ai.max_analyses_per_client = 1;
    let server = TestServer::start(config).await;
    let first = play_game(&server, &ITALIAN, true).await;
    let second = play_game(&server, &SCHOLARS_MATE, false).await;
    let (status, body) = server
        .post(&format!("/api/games/{first}/analysis"), None, None)
        .await;
    assert_eq!(status, 202, "{body}");
    wait_analysis(&server, &first, |body| body["status"] == "running").await;
    let refused = server
        .post(&format!("/api/games/{second}/analysis"), None, None)
        .await;
    assert_error(&refused, 429, "rate_limited");
    assert!(refused.1["error"]["message"]
        .as_str()
        .is_some_and(|m| m.contains("per client")));
    assert_eq!(analysis(&server, &second).await["status"], "none");

    // A human v AI game: the computer answers although the analysis holds
    // the only search thread.
    let (game, token) = server
        .create_game(
            json!({"white": {"kind": "human"}, "black": {"kind": "ai", "level": 1}}),
            None,
        )
        .await;
    let id = game["id"].as_str().expect("id").to_string();
    server.play(&id, &token.expect("seat"), "e2e4").await;
    server
        .wait_state(&id, "the AI's answer", |state| {
            state["moves"].as_array().is_some_and(|m| m.len() == 2)
        })
        .await;
    assert_eq!(analysis(&server, &first).await["status"], "running");
    // Shutting down stops the job (within the support's deadline).
    server.stop().await;
}

/// Stopped mid-job, the analysis resumes at the next start and gives the
/// same numbers as a run that was never interrupted (fixed node budget).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_interrupted_analysis_resumes_with_the_same_results() {
    const NODES: u64 = 300_000;
    let db = TestDb::new();
    let server = TestServer::start(config(&db, NODES)).await;
    let id = play_game(&server, &ITALIAN, true).await;
    server
        .post(&format!("/api/games/{id}/analysis"), None, None)
        .await;
    let partial = wait_analysis(&server, &id, |body| {
        body["progress"]["done"].as_u64().unwrap_or(0) >= 2 || body["status"] == "done"
    })
    .await;
    server.stop().await;

    let server = TestServer::start(config(&db, NODES)).await;
    let resumed = wait_analysis(&server, &id, |body| body["status"] == "done").await;
    // The positions found before the stop were kept, not searched again.
    let kept = partial["positions"].as_array().expect("positions");
    for (ply, position) in kept.iter().enumerate() {
        assert_eq!(&resumed["positions"][ply], position);
    }
    server.stop().await;

    // The same game analysed in one go, on another database.
    let other_db = TestDb::new();
    let other = TestServer::start(config(&other_db, NODES)).await;
    let again = play_game(&other, &ITALIAN, true).await;
    other
        .post(&format!("/api/games/{again}/analysis"), None, None)
        .await;
    let whole = wait_analysis(&other, &again, |body| body["status"] == "done").await;
    assert_eq!(resumed["positions"], whole["positions"]);
    assert_eq!(resumed["moves"], whole["moves"]);
    assert_eq!(resumed["acpl"], whole["acpl"]);
    other.stop().await;
}

const STARTPOS: &str = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_pgn_is_read_and_continued() {
    let db = TestDb::new();
    let server = TestServer::start(config(&db, 1_000)).await;
    let pgn = "[Event \"x\"]\n[White \"alice\"]\n\n1. e4 {best} e5 2. Nf3 Nc6 (2... d6) 3. Bb5 *";
    let (status, read) = server
        .post("/api/pgn", None, Some(json!({"pgn": pgn})))
        .await;
    assert_eq!(status, 200, "{read}");
    assert_eq!(
        read["moves"],
        json!(["e2e4", "e7e5", "g1f3", "b8c6", "f1b5"])
    );
    assert_eq!(read["san"][4], "Bb5");
    assert_eq!(read["white"], "alice");
    assert_eq!(read["over"], false);
    let last_fen = read["fen"].as_str().expect("fen").to_string();

    // Continued against the computer, history and all (issue 22): casual.
    let (game, _) = server
        .create_game(
            json!({"white": {"kind": "ai", "level": 1}, "black": {"kind": "human"}, "pgn": pgn}),
            None,
        )
        .await;
    assert_eq!(game["initial_fen"], STARTPOS);
    assert_eq!(game["fen"], last_fen.as_str());
    assert_eq!(game["moves"], read["moves"]);
    assert_eq!(game["san"], read["san"]);
    assert_eq!(game["turn"], "black");
    assert_eq!(game["rated"], false);
    let id = game["id"].as_str().expect("id");
    let (_, _, exported) = server.get_text(&format!("/api/games/{id}/pgn")).await;
    assert!(
        exported.contains("1. e4 e5 2. Nf3 Nc6 3. Bb5"),
        "{exported}"
    );

    // Continued with a friend: a private game from the same position that
    // the friend joins with the invite and plays on from.
    let (status, created) = server
        .post(
            "/api/games",
            None,
            Some(
                json!({"white": {"kind": "human"}, "black": {"kind": "human"},
                        "as": "white", "visibility": "private", "pgn": pgn}),
            ),
        )
        .await;
    assert_eq!(status, 201, "{created}");
    let game = &created["game"];
    assert_eq!(game["fen"], last_fen.as_str());
    assert_eq!(game["status"], "waiting");
    assert_eq!(game["rated"], false);
    let id = game["id"].as_str().expect("id");
    let invite = created["invite"]
        .as_str()
        .expect("an invite for the friend");
    let (status, joined) = server
        .post(
            &format!("/api/games/{id}/join"),
            None,
            Some(json!({"invite": invite})),
        )
        .await;
    assert_eq!(status, 200, "{joined}");
    assert_eq!(joined["seat"]["color"], "black");
    let friend = joined["seat"]["token"].as_str().expect("the friend's seat");
    let after = server.play(id, friend, "a7a6").await;
    assert_eq!(
        after["moves"],
        json!(["e2e4", "e7e5", "g1f3", "b8c6", "f1b5", "a7a6"])
    );
    assert_eq!(after["turn"], "white");

    let (_, listed) = server.get("/api/games?limit=100").await;
    let count = listed["games"].as_array().map_or(0, Vec::len);
    let cases = [
        ("1. e4 e5 2. Ke3 *", "move 2. Ke3"),
        ("1. e4 {unclosed", "unterminated comment"),
        ("1. f3 e5 2. g4 Qh4# 0-1", "already over"),
    ];
    for (bad, says) in cases {
        let answer = server
            .post(
                "/api/games",
                None,
                Some(json!({"white": {"kind": "human"}, "black": {"kind": "human"}, "pgn": bad})),
            )
            .await;
        assert_error(&answer, 400, "bad_request");
        let message = answer.1["error"]["message"].as_str().unwrap_or_default();
        assert!(message.contains(says), "{bad}: {message}");
    }
    let answer = server
        .post("/api/pgn", None, Some(json!({"pgn": "1. e4 e5 2. Ke3 *"})))
        .await;
    assert_error(&answer, 400, "bad_request");
    let both = server
        .post(
            "/api/games",
            None,
            Some(
                json!({"white": {"kind": "human"}, "black": {"kind": "human"},
                        "pgn": pgn, "fen": last_fen}),
            ),
        )
        .await;
    assert_error(&both, 400, "bad_request");
    let (_, listed) = server.get("/api/games?limit=100").await;
    assert_eq!(
        listed["games"].as_array().map_or(0, Vec::len),
        count,
        "nothing created"
    );
    server.stop().await;
}

/// Issue 25: `POST /api/pgn` with a file of several games lists them (and
/// reads the first, as before); `index` picks another, and `POST
/// /api/games` continues the picked one with `pgn_index`. A text of one
/// game is answered as before, without a list.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_pgn_file_of_several_games_lists_them_and_one_is_picked() {
    let db = TestDb::new();
    let server = TestServer::start(config(&db, 1_000)).await;
    let file = "[Event \"Club\"]\n[Date \"2026.11.01\"]\n[White \"alice\"]\n[Black \"bob\"]\n\
        [Result \"1-0\"]\n\n1. e4 e5 2. Qh5 Nc6 3. Bc4 Nf6 4. Qxf7# 1-0\n\n\
        [Event \"Club\"]\n[Date \"2026.11.02\"]\n[White \"carol\"]\n[Black \"dave\"]\n\
        [Result \"*\"]\n\n1. d4 d5 2. c4 *\n";
    let (status, read) = server
        .post("/api/pgn", None, Some(json!({"pgn": file})))
        .await;
    assert_eq!(status, 200, "{read}");
    assert_eq!(read["index"], 0);
    assert_eq!(read["white"], "alice");
    assert_eq!(read["moves"].as_array().map(Vec::len), Some(7));
    assert_eq!(
        read["games"],
        json!([
            {"index": 0, "white": "alice", "black": "bob", "result": "1-0",
             "date": "2026.11.01", "event": "Club", "moves": 7},
            {"index": 1, "white": "carol", "black": "dave", "result": "*",
             "date": "2026.11.02", "event": "Club", "moves": 3},
        ])
    );

    let (status, second) = server
        .post("/api/pgn", None, Some(json!({"pgn": file, "index": 1})))
        .await;
    assert_eq!(status, 200, "{second}");
    assert_eq!(second["index"], 1);
    assert_eq!(second["moves"], json!(["d2d4", "d7d5", "c2c4"]));
    assert_eq!(second["san"], json!(["d4", "d5", "c4"]));
    assert_eq!(second["white"], "carol");
    assert_eq!(second["black"], "dave");
    assert_eq!(second["result"], "*");
    assert_eq!(second["over"], false);
    assert_eq!(second["games"], read["games"]);

    let answer = server
        .post("/api/pgn", None, Some(json!({"pgn": file, "index": 2})))
        .await;
    assert_error(&answer, 400, "bad_request");

    // The picked game continued: the first one is over, the second is not.
    let (game, _) = server
        .create_game(
            json!({"white": {"kind": "human"}, "black": {"kind": "ai", "level": 1},
                   "pgn": file, "pgn_index": 1}),
            None,
        )
        .await;
    assert_eq!(game["moves"], second["moves"]);
    assert_eq!(game["turn"], "black");

    // One game: the answer of before, no list.
    let (status, one) = server
        .post("/api/pgn", None, Some(json!({"pgn": "1. e4 e5 *"})))
        .await;
    assert_eq!(status, 200, "{one}");
    assert!(one.get("games").is_none(), "{one}");
    assert_eq!(one["index"], 0);

    // A later game that cannot be read: the games before it, and why.
    let broken = format!("{file}\n[Event \"bad\"]\n\n1. e4 e5 2. Ke3 *\n");
    let (status, partial) = server
        .post("/api/pgn", None, Some(json!({"pgn": broken})))
        .await;
    assert_eq!(status, 200, "{partial}");
    assert_eq!(partial["games"].as_array().map(Vec::len), Some(2));
    let why = partial["unreadable"].as_str().unwrap_or_default();
    assert!(why.contains("game 3: move 2. Ke3"), "{partial}");
    server.stop().await;
}

//! Chess960 (issue 40) end to end, against the real server on port 0 with a
//! temporary database: a game created by start number, played over HTTP and
//! WebSocket with castling on both wings from unusual files (moves sent and
//! shown king takes rook), kept a Chess960 game across a restart, exported
//! and imported as PGN, analysed; the terms refused when wrong; the AI
//! playing Chess960 at every level (and castling to mate); a challenge in
//! lichess's shapes.

mod support;

use std::time::Duration;

use serde_json::{json, Value};
use support::*;

/// Start 759: `RKBNNRQB`. White's king starts on b1 beside its a1 rook, so
/// its long castle moves the king *towards* the h-file (b1 to c1) while
/// the rook jumps over it (a1 to d1), and the king's two squares, `b1c1`,
/// are a plain king step. Black's rook already stands on f8, the short
/// castle's rook square: only the king moves, five files (b8 to g8).
const START: i64 = 759;
const START_FEN: &str = "rkbnnrqb/pppppppp/8/8/8/8/PPPPPPPP/RKBNNRQB w KQkq - 0 1";

/// Clearing both back ranks, then the castles (white long, black short).
const OPENING: [&str; 6] = [
    "d2d3", "d7d6", // the c-bishops' diagonals open
    "c1d2", "c8d7", // ...and they leave the back rank
    "d1e3", "d8e6", // so do the d-knights
];

fn config(db: &TestDb) -> rookery_server::Config {
    let mut config = test_config(db);
    config.ai.analysis_nodes = 2_000;
    config
}

fn legal(state: &Value) -> Vec<String> {
    state["legal_moves"]
        .as_array()
        .expect("legal_moves")
        .iter()
        .map(|mv| mv.as_str().expect("a move").to_string())
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_chess960_game_castles_both_ways_survives_a_restart_and_round_trips_as_pgn() {
    let db = TestDb::new();
    let server = TestServer::start(config(&db)).await;
    let (id, white, black) = server
        .human_game(json!({"variant": "chess960", "chess960_start": START}))
        .await;
    let state = server.state(&id).await;
    assert_eq!(state["variant"], "chess960");
    assert_eq!(state["initial_fen"], START_FEN);
    assert_eq!(state["rated"], true, "a numbered start is a fair start");

    for (ply, uci) in OPENING.iter().enumerate() {
        let token = if ply % 2 == 0 { &white } else { &black };
        server.play(&id, token, uci).await;
    }
    // Both castles of white are on offer, spelled king takes rook; the
    // king's two squares are a king step here, not a castle.
    let state = server.state(&id).await;
    let offered = legal(&state);
    assert!(offered.contains(&"b1a1".to_string()), "{offered:?}");
    assert!(offered.contains(&"b1c1".to_string()), "{offered:?}");

    // The server restarts: the game is still Chess960 (its castling still
    // read and written king takes rook).
    server.stop().await;
    let server = TestServer::start(config(&db)).await;
    let state = server.state(&id).await;
    assert_eq!(state["variant"], "chess960");
    assert!(legal(&state).contains(&"b1a1".to_string()), "{state}");

    // White castles long over the WebSocket.
    let mut ws = WsClient::connect(&server, &id, Some(&white)).await;
    ws.next_state().await;
    ws.send(json!({"type": "move", "uci": "b1a1"})).await;
    let state = ws
        .state_where("the long castle", |s| moves(s).len() == 7)
        .await;
    assert_eq!(state["san"][6], "O-O-O");
    assert_eq!(moves(&state)[6], "b1a1");
    assert!(
        state["fen"]
            .as_str()
            .unwrap()
            .ends_with("/2KRNRQB b kq - 5 4"),
        "king on c1, rook on d1: {}",
        state["fen"]
    );

    for (ply, uci) in ["e8f6", "e1f3", "g7g6", "h2h3", "g8g7", "a2a3"]
        .iter()
        .enumerate()
    {
        let token = if ply % 2 == 0 { &black } else { &white };
        server.play(&id, token, uci).await;
    }
    // Black castles short, sent as the king's move to its square (b8g8:
    // five files, no king step has them), which the server accepts and
    // shows king takes rook.
    assert!(legal(&server.state(&id).await).contains(&"b8f8".to_string()));
    let castled = server.play(&id, &black, "b8g8").await;
    assert_eq!(moves(&castled)[13], "b8f8");
    assert_eq!(castled["san"][13], "O-O");
    assert!(
        castled["fen"]
            .as_str()
            .unwrap()
            .starts_with("r4rkb/pppbppqp/3pnnp1/"),
        "king on g8, rook stays on f8: {}",
        castled["fen"]
    );
    // Bad castles change nothing: a castle already made cannot be made again.
    let (status, refused) = server
        .post(
            &format!("/api/games/{id}/move"),
            Some(&white),
            Some(json!({"uci": "c1d1"})),
        )
        .await;
    assert_eq!(status, 400, "{refused}");

    // The PGN of the game in progress: the variant, its start, castles in
    // SAN.
    let (status, _, pgn) = server.get_text(&format!("/api/games/{id}/pgn")).await;
    assert_eq!(status, 200);
    for tag in [
        "[Variant \"Chess960\"]",
        "[SetUp \"1\"]",
        &format!("[FEN \"{START_FEN}\"]"),
    ] {
        assert!(pgn.contains(tag), "{tag} in {pgn}");
    }
    assert!(
        pgn.contains("4. O-O-O Nf6") && pgn.contains("7. a3 O-O *"),
        "{pgn}"
    );
    // Read back: the same game, castles king takes rook.
    let (status, read) = server
        .post("/api/pgn", None, Some(json!({"pgn": pgn})))
        .await;
    assert_eq!(status, 200, "{read}");
    assert_eq!(read["variant"], "chess960");
    assert_eq!(read["moves"], castled["moves"]);
    // And continued as a new game: Chess960, from the same start, with
    // the same moves.
    let (copy, _) = server
        .create_game(
            json!({"white": {"kind": "human"}, "black": {"kind": "human"}, "pgn": pgn}),
            None,
        )
        .await;
    assert_eq!(copy["variant"], "chess960");
    assert_eq!(copy["initial_fen"], START_FEN);
    assert_eq!(copy["moves"], castled["moves"]);
    assert_eq!(copy["legal_moves"], castled["legal_moves"]);
    // A PGN of a Chess960 game is not a standard game.
    let (status, refused) = server
        .post(
            "/api/games",
            None,
            Some(json!({
                "white": {"kind": "human"}, "black": {"kind": "human"},
                "pgn": pgn, "variant": "standard",
            })),
        )
        .await;
    assert_error(&(status, refused), 400, "bad_request");

    // White resigns: the game is over, listed as Chess960.
    let (status, over) = server
        .post(&format!("/api/games/{id}/resign"), Some(&white), None)
        .await;
    assert_eq!(status, 200, "{over}");
    assert_eq!(over["result"], "0-1");
    let (_, list) = server.get("/api/games?status=finished").await;
    let listed = list["games"]
        .as_array()
        .expect("games")
        .iter()
        .find(|game| game["id"] == id.as_str())
        .cloned()
        .expect("the game is listed");
    assert_eq!(listed["variant"], "chess960");
    assert_eq!(listed["moves"], castled["moves"]);

    // Post-game analysis replays it in Chess960.
    let (status, started) = server
        .post(&format!("/api/games/{id}/analysis"), None, None)
        .await;
    assert!(status == 202 || status == 200, "{status} {started}");
    let done = within(Duration::from_secs(120), "the analysis", async {
        loop {
            let (_, body) = server.get(&format!("/api/games/{id}/analysis")).await;
            if body["status"] == "done" || body["status"] == "failed" {
                return body;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    })
    .await;
    assert_eq!(done["status"], "done", "{done}");
    assert_eq!(done["positions"].as_array().map(Vec::len), Some(15));
    server.stop().await;
}

#[tokio::test]
async fn chess960_terms_are_checked() {
    let db = TestDb::new();
    let server = TestServer::start(test_config(&db)).await;
    let humans = |extra: Value| {
        let mut body = json!({"white": {"kind": "human"}, "black": {"kind": "human"}});
        body.as_object_mut()
            .unwrap()
            .extend(extra.as_object().unwrap().clone());
        body
    };
    for bad in [
        json!({"variant": "atomic"}),
        json!({"variant": "chess960", "chess960_start": 960}),
        json!({"variant": "chess960", "chess960_start": -1}),
        json!({"chess960_start": 3}),
        json!({"variant": "chess960", "chess960_start": 3, "fen": START_FEN}),
    ] {
        let answer = server.post("/api/games", None, Some(humans(bad))).await;
        assert_error(&answer, 400, "bad_request");
    }
    let (_, list) = server.get("/api/games").await;
    assert_eq!(list["games"], json!([]), "nothing was created");

    // No number: a start drawn at random, one of the 960 (both sides
    // alike, every right).
    let (drawn, _) = server
        .create_game(humans(json!({"variant": "chess960"})), None)
        .await;
    assert_eq!(drawn["variant"], "chess960");
    let fen = drawn["initial_fen"].as_str().unwrap();
    let ranks: Vec<&str> = fen.split(['/', ' ']).collect();
    assert_eq!(ranks[0].to_uppercase(), ranks[7], "{fen}");
    assert!(fen.ends_with(" w KQkq - 0 1"), "{fen}");
    // Any FEN may start a Chess960 game (castling read the Chess960 way);
    // only one of the 960 starts is rated.
    let (custom, _) = server
        .create_game(
            humans(json!({
                "variant": "chess960",
                "fen": "1r2k1r1/pppppppp/8/8/8/8/PPPPPPPP/1R2K1R1 w GBgb - 0 1",
            })),
            None,
        )
        .await;
    assert_eq!(custom["variant"], "chess960");
    assert_eq!(custom["rated"], false);
    let mut castles: Vec<String> = legal(&custom)
        .into_iter()
        .filter(|mv| mv == "e1b1" || mv == "e1g1")
        .collect();
    castles.sort();
    assert_eq!(castles, ["e1b1", "e1g1"], "{custom}");
    // A standard game stays as it was: castling e1g1.
    let (standard, _) = server.create_game(humans(json!({})), None).await;
    assert_eq!(standard["variant"], "standard");
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_ai_plays_chess960_at_every_level_and_castles_to_mate() {
    let db = TestDb::new();
    let server = TestServer::start(test_config(&db)).await;
    // Every level makes its first move from a Chess960 start.
    let mut games = Vec::new();
    for level in 1..=8 {
        let (game, _) = server
            .create_game(
                json!({
                    "white": {"kind": "ai", "level": level},
                    "black": {"kind": "human"},
                    "variant": "chess960",
                    "chess960_start": START,
                    "clock": {"initial": 60},
                }),
                None,
            )
            .await;
        games.push(game["id"].as_str().unwrap().to_string());
    }
    for id in &games {
        let state = server
            .wait_state(id, "the AI's first move", |s| moves(s).len() == 1)
            .await;
        assert_eq!(state["variant"], "chess960");
        assert_eq!(state["turn"], "black");
    }
    // The only mate in one here is the long castle (the rook lands on d1,
    // the king's escape d7 is the bishop's): the full-strength AI finds it
    // and plays it king takes rook.
    let (game, _) = server
        .create_game(
            json!({
                "white": {"kind": "ai", "level": 8},
                "black": {"kind": "human"},
                "variant": "chess960",
                "fen": "2rkr3/2p1p3/8/1B6/8/8/8/RK6 w Q - 0 1",
            }),
            None,
        )
        .await;
    let id = game["id"].as_str().unwrap();
    let mated = server
        .wait_state(id, "the AI's castle", |s| s["status"] == "finished")
        .await;
    assert_eq!(mated["moves"], json!(["b1a1"]));
    assert_eq!(mated["san"], json!(["O-O-O#"]));
    assert_eq!(mated["termination"], "checkmate");
    server.stop().await;
}

#[tokio::test]
async fn a_chess960_challenge_speaks_lichess() {
    let db = TestDb::new();
    let server = TestServer::start(test_config(&db)).await;
    let alice = person(&server, "alice", &["play", "challenge"]).await;
    let bob = person(&server, "bob", &["play", "challenge"]).await;

    // A FEN that is no Chess960 start, and a bad number, are refused.
    for body in [
        "variant=chess960&fen=4k3/8/8/8/8/8/4P3/4K3%20w%20-%20-%200%201",
        "variant=chess960&chess960_start=1000",
        "variant=crazyhouse",
    ] {
        let (status, answer) = form(&server, "/api/challenge/bob", &alice, body).await;
        assert_eq!(status, 400, "{body}: {answer}");
        assert!(answer["error"].is_string(), "{answer}");
    }
    let (status, challenge) = form(
        &server,
        "/api/challenge/bob",
        &alice,
        "variant=chess960&chess960_start=759&color=white&clock.limit=300&clock.increment=2",
    )
    .await;
    assert_eq!(status, 200, "{challenge}");
    assert_eq!(
        challenge["variant"],
        json!({"key": "chess960", "name": "Chess960", "short": "960"})
    );
    assert_eq!(challenge["initialFen"], START_FEN);
    assert_eq!(challenge["perf"]["name"], "chess960");
    let id = challenge["id"].as_str().unwrap();
    let (status, accepted) = form(&server, &format!("/api/challenge/{id}/accept"), &bob, "").await;
    assert_eq!(status, 200, "{accepted}");
    let state = server.state(id).await;
    assert_eq!(state["variant"], "chess960");
    assert_eq!(state["initial_fen"], START_FEN);

    // lichess's export of it.
    let response = server
        .http
        .get(server.url(&format!("/game/export/{id}")))
        .header("accept", "application/json")
        .send()
        .await
        .expect("export");
    let (status, exported) = read(response).await;
    assert_eq!(status, 200, "{exported}");
    assert_eq!(exported["variant"], "chess960");
    assert_eq!(exported["initialFen"], START_FEN);

    // A game against the AI in Chess960, from a drawn start.
    let (status, ai) = form(
        &server,
        "/api/challenge/ai",
        &alice,
        "level=1&variant=chess960&color=white",
    )
    .await;
    assert_eq!(status, 200, "{ai}");
    assert_eq!(ai["variant"]["key"], "chess960");
    let state = server.state(ai["id"].as_str().unwrap()).await;
    assert_eq!(state["variant"], "chess960");
    server.stop().await;
}

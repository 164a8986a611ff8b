//! Black-box tests of games through the public contract: the real service
//! in-process on port 0 with a temporary SQLite file, real HTTP and
//! WebSocket clients.

mod support;

use futures_util::StreamExt;
use rookery_engine::pgn::read_pgn;
use serde_json::{json, Value};
use support::*;

async fn register(server: &TestServer, name: &str) -> String {
    let (status, player) = server
        .post("/api/players", None, Some(json!({ "name": name })))
        .await;
    assert_eq!(status, 201, "{player}");
    assert_eq!(player["name"], name);
    assert!(player["id"].as_str().is_some_and(|id| id.len() == 36));
    let token = player["token"].as_str().expect("token").to_string();
    assert!(token.len() >= 32, "a 128-bit+ token");
    token
}

/// Reads NDJSON lines from a streaming response until the stream ends.
async fn read_ndjson(response: reqwest::Response) -> Vec<Value> {
    let mut body = response.bytes_stream();
    let mut buffer = Vec::new();
    let mut states = Vec::new();
    within(WAIT, "the NDJSON stream to end", async {
        while let Some(chunk) = body.next().await {
            buffer.extend_from_slice(&chunk.expect("stream chunk"));
            while let Some(end) = buffer.iter().position(|b| *b == b'\n') {
                let line: Vec<u8> = buffer.drain(..=end).collect();
                states.push(serde_json::from_slice(&line[..end]).expect("a JSON line"));
            }
        }
    })
    .await;
    assert!(buffer.is_empty(), "no partial line at the end");
    states
}

#[tokio::test]
async fn human_v_human_to_checkmate_watched_live() {
    let db = TestDb::new();
    let server = TestServer::start(test_config(&db)).await;
    let alice = register(&server, "alice").await;
    let bob = register(&server, "Bob_2").await;

    let (game, white) = server
        .create_game(
            json!({"white": {"kind": "human"}, "black": {"kind": "human"}}),
            Some(&alice),
        )
        .await;
    let white = white.expect("the creator gets a seat");
    let id = game["id"].as_str().unwrap().to_string();
    assert_eq!(game["status"], "waiting");
    assert_eq!(game["white"]["name"], "alice");
    assert_eq!(game["black"]["name"], Value::Null);
    assert_eq!(game["turn"], "white");
    assert_eq!(game["clock"], Value::Null);
    assert_eq!(game["legal_moves"].as_array().unwrap().len(), 20);

    // A spectator and an NDJSON reader follow from the start.
    let mut spectator = WsClient::connect(&server, &id, None).await;
    let first = spectator.next_state().await;
    assert_eq!(first["status"], "waiting");
    assert_eq!(first["spectators"], 1);
    let stream = server
        .http
        .get(server.url(&format!("/api/games/{id}/stream")))
        .send()
        .await
        .unwrap();
    assert_eq!(stream.status(), 200);
    assert_eq!(
        stream.headers()["content-type"].to_str().unwrap(),
        "application/x-ndjson"
    );
    let ndjson = tokio::spawn(read_ndjson(stream));

    let (status, joined) = server
        .post(&format!("/api/games/{id}/join"), Some(&bob), None)
        .await;
    assert_eq!(status, 200, "{joined}");
    assert_eq!(joined["seat"]["color"], "black");
    assert_eq!(joined["game"]["status"], "active");
    assert_eq!(joined["game"]["black"]["name"], "Bob_2");
    let black = joined["seat"]["token"].as_str().unwrap().to_string();
    assert_ne!(black, white);
    let joined_state = spectator
        .state_where("the join", |s| s["status"] == "active")
        .await;
    assert_eq!(joined_state["black"]["taken"], true);

    // White plays over its WebSocket, black over HTTP.
    let mut white_ws = WsClient::connect(&server, &id, Some(&white)).await;
    let state = white_ws.next_state().await;
    assert_eq!(state["white"]["connected"], true);
    assert_eq!(state["black"]["connected"], false);
    // A seat connecting changes the GameState: spectators get a whole state.
    spectator
        .state_where("white connected", |s| s["white"]["connected"] == true)
        .await;

    let scholars_mate = ["e2e4", "e7e5", "f1c4", "b8c6", "d1h5", "g8f6", "h5f7"];
    for (ply, uci) in scholars_mate.iter().enumerate() {
        if ply % 2 == 0 {
            white_ws.send(json!({"type": "move", "uci": uci})).await;
        } else {
            let state = server.play(&id, &black, uci).await;
            assert_eq!(moves(&state).len(), ply + 1);
        }
        // The spectator sees every move, in order.
        let seen = spectator.next_state().await;
        assert_eq!(
            moves(&seen),
            scholars_mate[..=ply],
            "spectator after ply {ply}"
        );
        // The mover may first get the state telling of its own connection.
        let mover_seen = white_ws
            .state_where("the move", |s| !moves(s).is_empty())
            .await;
        assert_eq!(moves(&mover_seen), scholars_mate[..=ply]);
    }
    let last = server.state(&id).await;
    assert_eq!(last["status"], "finished");
    assert_eq!(last["result"], "1-0");
    assert_eq!(last["termination"], "checkmate");
    assert_eq!(last["check"], true);
    assert_eq!(last["turn"], "black");
    assert_eq!(last["legal_moves"], json!([]));
    assert_eq!(
        last["san"],
        json!(["e4", "e5", "Bc4", "Nc6", "Qh5", "Nf6", "Qxf7#"])
    );
    assert_eq!(
        last["fen"],
        "r1bqkb1r/pppp1Qpp/2n2n2/4p3/2B1P3/8/PPPP1PPP/RNB1K1NR b KQkq - 0 4"
    );

    // The NDJSON stream saw the start, every move, and ended with the game.
    let lines = within(WAIT, "the NDJSON reader", ndjson).await.unwrap();
    assert_eq!(lines.first().unwrap()["status"], "waiting");
    assert_eq!(lines.last().unwrap()["termination"], "checkmate");
    let mut plies: Vec<usize> = lines.iter().map(|s| moves(s).len()).collect();
    plies.dedup();
    assert_eq!(plies, (0..=7).collect::<Vec<_>>());

    // A stream of a finished game is its one final state.
    let again = server
        .http
        .get(server.url(&format!("/api/games/{id}/stream")))
        .send()
        .await
        .unwrap();
    let lines = read_ndjson(again).await;
    assert_eq!(lines.len(), 1);
    assert_eq!(lines[0]["termination"], "checkmate");

    // The finished game is listed and exported.
    let (_, finished) = server.get("/api/games?status=finished").await;
    assert!(finished["games"]
        .as_array()
        .unwrap()
        .iter()
        .any(|g| g["id"] == id.as_str()));
    let (status, content_type, pgn) = server.get_text(&format!("/api/games/{id}/pgn")).await;
    assert_eq!(status, 200);
    assert_eq!(content_type, "application/x-chess-pgn");
    let parsed = read_pgn(&pgn).expect("the export parses");
    let uci: Vec<String> = parsed.game.moves().iter().map(|m| m.to_uci()).collect();
    assert_eq!(uci, scholars_mate);
    assert_eq!(parsed.tag("White"), Some("alice"));
    assert_eq!(parsed.tag("Black"), Some("Bob_2"));
    assert_eq!(parsed.result(), Some("1-0"));
    assert_eq!(parsed.tag("Termination"), Some("normal"));

    // The scoreboard counts it for the players and for white.
    let (_, board) = server.get("/api/scoreboard").await;
    assert_eq!(board["colors"], json!({"white": 1, "black": 0, "draws": 0}));
    let players = board["players"].as_array().unwrap();
    assert_eq!(
        players[0],
        json!({"name": "alice", "games": 1, "wins": 1, "losses": 0, "draws": 0,
               "rating": 1662, "rating_deviation": 290, "provisional": true})
    );
    assert_eq!(
        players[1],
        json!({"name": "Bob_2", "games": 1, "wins": 0, "losses": 1, "draws": 0,
               "rating": 1338, "rating_deviation": 290, "provisional": true})
    );
    assert_eq!(board["ai"], json!([]));

    // Disconnecting clears the flag, in a whole state again.
    drop(white_ws);
    let after = spectator
        .state_where("white disconnected", |s| s["white"]["connected"] == false)
        .await;
    assert_eq!(after["spectators"], 1);
    assert_eq!(after["black"]["connected"], false);
    assert_eq!(after["termination"], "checkmate");
    server.stop().await;
}

#[tokio::test]
async fn human_v_ai_the_ai_answers() {
    let db = TestDb::new();
    let server = TestServer::start(test_config(&db)).await;
    // The human takes black: the AI (white) opens at once.
    let (game, token) = server
        .create_game(
            json!({"white": {"kind": "ai", "level": 1}, "black": {"kind": "human"},
                   "clock": {"initial": 120, "increment": 1}}),
            None,
        )
        .await;
    let token = token.expect("the human seat");
    let id = game["id"].as_str().unwrap().to_string();
    assert_eq!(game["status"], "active");
    assert_eq!(game["white"], json!({"kind": "ai", "level": 1}));
    let mut ws = WsClient::connect(&server, &id, Some(&token)).await;
    let opened = ws
        .state_where("the AI's first move", |s| moves(s).len() == 1)
        .await;
    assert_eq!(opened["turn"], "black");
    // Black's clock waits for Black's first move (issue 22); the AI's
    // first move cost White nothing.
    assert_eq!(opened["clock"]["running"], Value::Null);
    assert_eq!(opened["clock"]["black_ms"], 120_000);
    assert_eq!(opened["clock"]["white_ms"], 120_000);
    assert!(opened["first_move_ms"].as_u64().is_some(), "{opened}");
    // Answer with any legal move, then the AI answers again.
    for round in 0..3 {
        let state = server.state(&id).await;
        let reply = state["legal_moves"][0].as_str().unwrap().to_string();
        let plies = moves(&state).len();
        server.play(&id, &token, &reply).await;
        let answered = server
            .wait_state(&id, "the AI's answer", |s| moves(s).len() == plies + 2)
            .await;
        assert_eq!(answered["turn"], "black", "round {round}");
        assert_eq!(answered["status"], "active");
        let clock = &answered["clock"];
        // 120 s plus one second per AI move at most.
        let white_moves = (moves(&answered).len() as u64).div_ceil(2);
        assert!(clock["white_ms"].as_u64().unwrap() <= 120_000 + 1_000 * white_moves);
        assert_eq!(clock["increment_ms"], 1000);
    }
    // Resigning ends it; the AI level is scored.
    let (status, resigned) = server
        .post(&format!("/api/games/{id}/resign"), Some(&token), None)
        .await;
    assert_eq!(status, 200);
    assert_eq!(resigned["result"], "1-0");
    assert_eq!(resigned["termination"], "resignation");
    assert_eq!(resigned["clock"]["running"], Value::Null);
    let (_, board) = server.get("/api/scoreboard").await;
    assert_eq!(
        board["ai"],
        json!([{"level": 1, "games": 1, "wins": 1, "losses": 0, "draws": 0}])
    );
    assert_eq!(board["colors"]["white"], 1);
    assert_eq!(
        board["players"],
        json!([]),
        "anonymous seats count for nobody"
    );
    server.stop().await;
}

#[tokio::test]
async fn ai_v_ai_plays_on_its_own_and_stops_with_the_server() {
    let db = TestDb::new();
    let server = TestServer::start(test_config(&db)).await;
    let (game, seat) = server
        .create_game(
            json!({"white": {"kind": "ai", "level": 1}, "black": {"kind": "ai", "level": 2}}),
            None,
        )
        .await;
    assert_eq!(seat, None, "AI v AI has no seat");
    let id = game["id"].as_str().unwrap().to_string();
    let mut watcher = WsClient::connect(&server, &id, None).await;
    // It either finishes or plays on; both prove it runs by itself.
    let state = watcher
        .state_where("AI v AI progress", |s| {
            s["status"] == "finished" || moves(s).len() >= 24
        })
        .await;
    let pgn = server.get_text(&format!("/api/games/{id}/pgn")).await.2;
    let parsed = read_pgn(&pgn).expect("the export parses");
    assert!(parsed.game.moves().len() >= moves(&state).len());
    // A spectator cannot act on it.
    watcher.send(json!({"type": "resign"})).await;
    within(WAIT, "the forbidden answer", async {
        loop {
            let message = watcher.next().await;
            if message["type"] == "error" {
                assert_eq!(message["code"], "forbidden");
                break;
            }
        }
    })
    .await;
    // Graceful shutdown stops the running searches and closes the socket.
    server.stop().await;
    within(WAIT, "the socket to close", async {
        while let Some(Ok(_)) = watcher.socket.next().await {}
    })
    .await;
}

#[tokio::test]
async fn ai_v_ai_is_paced_off_the_clock() {
    let db = TestDb::new();
    let mut config = test_config(&db);
    config.ai.ai_move_delay_ms = 800;
    let server = TestServer::start(config).await;
    let started = std::time::Instant::now();
    let (game, _) = server
        .create_game(
            json!({"white": {"kind": "ai", "level": 1}, "black": {"kind": "ai", "level": 1},
                   "clock": {"initial": 60, "increment": 0}}),
            None,
        )
        .await;
    let id = game["id"].as_str().unwrap().to_string();
    let state = server
        .wait_state(&id, "three paced moves", |s| moves(s).len() >= 3)
        .await;
    let elapsed = started.elapsed().as_millis() as u64;
    assert!(elapsed >= 3 * 800, "paced: {elapsed} ms for three moves");
    // The pacing pause is not the AI's thinking: it is kept off the clocks,
    // which together lost far less than the time that passed.
    let clock = &state["clock"];
    let charged =
        2 * 60_000 - clock["white_ms"].as_u64().unwrap() - clock["black_ms"].as_u64().unwrap();
    assert!(
        charged < elapsed / 2,
        "charged {charged} ms of {elapsed} ms"
    );
    server.stop().await;
}

#[tokio::test]
async fn draw_offer_accept_resign_and_flag_fall() {
    let db = TestDb::new();
    let server = TestServer::start(test_config(&db)).await;

    // Draw by agreement.
    let (id, white, black) = server.human_game(json!({})).await;
    server.play(&id, &white, "d2d4").await;
    let (status, offered) = server
        .post(&format!("/api/games/{id}/draw"), Some(&black), None)
        .await;
    assert_eq!(status, 200);
    assert_eq!(offered["draw_offer"], "black");
    // The offer stands while its maker moves; the opponent's move declines it.
    let state = server.play(&id, &black, "d7d5").await;
    assert_eq!(state["draw_offer"], "black");
    let state = server.play(&id, &white, "c2c4").await;
    assert_eq!(state["draw_offer"], Value::Null);
    server.play(&id, &black, "e7e6").await;
    let (_, offered) = server
        .post(&format!("/api/games/{id}/draw"), Some(&white), None)
        .await;
    assert_eq!(offered["draw_offer"], "white");
    let (status, agreed) = server
        .post(&format!("/api/games/{id}/draw"), Some(&black), None)
        .await;
    assert_eq!(status, 200);
    assert_eq!(agreed["status"], "finished");
    assert_eq!(agreed["result"], "1/2-1/2");
    assert_eq!(agreed["termination"], "agreement");

    // Resignation.
    let (id, _white, black) = server.human_game(json!({})).await;
    let (_, resigned) = server
        .post(&format!("/api/games/{id}/resign"), Some(&black), None)
        .await;
    assert_eq!(resigned["result"], "1-0");
    assert_eq!(resigned["termination"], "resignation");

    // The server notices a flag fall with nobody sending anything (once
    // each side has made its first move: the clocks wait for it).
    let (id, white, black) = server
        .human_game(json!({"clock": {"initial": 0.5, "increment": 0}}))
        .await;
    let mut ws = WsClient::connect(&server, &id, Some(&white)).await;
    server.play(&id, &white, "e2e4").await;
    server.play(&id, &black, "e7e5").await;
    let flagged = ws
        .state_where("white's flag to fall", |s| s["status"] == "finished")
        .await;
    assert_eq!(flagged["termination"], "timeout");
    assert_eq!(flagged["result"], "0-1");
    assert_eq!(flagged["clock"]["white_ms"], 0);
    assert_eq!(flagged["clock"]["running"], Value::Null);

    // Timeout against a side that cannot mate is a draw.
    let (id, white, black) = server
        .human_game(json!({"clock": {"initial": 0.3}, "fen": "4k3/8/8/8/8/8/3Q4/4K1b1 w - - 0 1"}))
        .await;
    server.play(&id, &white, "d2d3").await;
    server.play(&id, &black, "g1h2").await;
    let drawn = server
        .wait_state(&id, "the flag to fall", |s| s["status"] == "finished")
        .await;
    assert_eq!(drawn["termination"], "timeout");
    assert_eq!(drawn["result"], "1/2-1/2");

    // The two flag falls are casual games (clocks under a minimum, one from
    // a custom start): they count apart from the main tally.
    let (_, board) = server.get("/api/scoreboard").await;
    assert_eq!(board["colors"], json!({"white": 1, "black": 0, "draws": 1}));
    assert_eq!(board["casual"], json!({"white": 0, "black": 1, "draws": 1}));
    server.stop().await;
}

#[tokio::test]
async fn custom_start_list_and_pgn_round_trip() {
    let db = TestDb::new();
    let server = TestServer::start(test_config(&db)).await;
    // Black to move promotes with check.
    let fen = "8/8/8/8/8/5k2/p7/2K5 b - - 0 50";
    let (id, white, black) = server.human_game(json!({ "fen": fen })).await;
    let state = server.state(&id).await;
    assert_eq!(state["initial_fen"], fen);
    assert_eq!(state["turn"], "black");
    let (status, answer) = server
        .post(
            &format!("/api/games/{id}/move"),
            Some(&white),
            Some(json!({"uci": "c1d1"})),
        )
        .await;
    assert_eq!(status, 409, "{answer}");
    server.play(&id, &black, "a2a1q").await;
    let state = server.play(&id, &white, "c1d2").await;
    assert_eq!(state["san"], json!(["a1=Q+", "Kd2"]));
    let (_, _, pgn) = server.get_text(&format!("/api/games/{id}/pgn")).await;
    assert!(pgn.contains("[SetUp \"1\"]"), "{pgn}");
    assert!(pgn.contains(&format!("[FEN \"{fen}\"]")), "{pgn}");
    assert!(pgn.contains("[Result \"*\"]"), "{pgn}");
    let parsed = read_pgn(&pgn).unwrap();
    assert_eq!(parsed.game.initial_position().to_fen(), fen);
    let uci: Vec<String> = parsed.game.moves().iter().map(|m| m.to_uci()).collect();
    assert_eq!(uci, ["a2a1q", "c1d2"]);

    // Lists: newest first, filtered by status, limited.
    let (older, _, _) = server.human_game(json!({})).await;
    let (_, waiting_token) = server
        .create_game(
            json!({"white": {"kind": "human"}, "black": {"kind": "human"}}),
            None,
        )
        .await;
    assert!(waiting_token.is_some());
    let (_, active) = server.get("/api/games?status=active").await;
    let active = active["games"].as_array().unwrap().clone();
    assert_eq!(active.len(), 3);
    assert_eq!(active[0]["status"], "waiting", "the newest first");
    assert_eq!(active[1]["id"], older.as_str());
    assert_eq!(active[2]["id"], id.as_str());
    let (_, limited) = server.get("/api/games?status=active&limit=1").await;
    assert_eq!(limited["games"].as_array().unwrap().len(), 1);
    // Asking for more than the most we list is not an error.
    let (status, many) = server.get("/api/games?status=active&limit=1000").await;
    assert_eq!(status, 200, "{many}");
    assert_eq!(many["games"].as_array().unwrap().len(), 3);
    let (_, finished) = server.get("/api/games?status=finished").await;
    assert_eq!(finished["games"], json!([]));
    let (_, all) = server.get("/api/games").await;
    assert_eq!(all["games"].as_array().unwrap().len(), 3);
    let created: Vec<i64> = active
        .iter()
        .map(|g| g["created_at"].as_i64().unwrap())
        .collect();
    assert!(created.windows(2).all(|w| w[0] >= w[1]));
    server.stop().await;
}

#[tokio::test]
async fn the_creator_can_take_black() {
    let db = TestDb::new();
    let server = TestServer::start(test_config(&db)).await;
    let (game, black) = server
        .create_game(
            json!({"white": {"kind": "human"}, "black": {"kind": "human"}, "as": "black"}),
            None,
        )
        .await;
    let id = game["id"].as_str().unwrap().to_string();
    assert_eq!(game["black"]["taken"], true);
    assert_eq!(game["white"]["taken"], false);
    let (status, joined) = server
        .post(&format!("/api/games/{id}/join"), None, None)
        .await;
    assert_eq!(status, 200);
    assert_eq!(joined["seat"]["color"], "white");
    let white = joined["seat"]["token"].as_str().unwrap().to_string();
    server.play(&id, &white, "e2e4").await;
    let state = server.play(&id, &black.unwrap(), "e7e5").await;
    assert_eq!(moves(&state), ["e2e4", "e7e5"]);
    server.stop().await;
}

#[tokio::test]
async fn json_bodies_are_read_whatever_their_content_type() {
    let db = TestDb::new();
    let server = TestServer::start(test_config(&db)).await;
    // What `curl -d '{...}'` sends: a form content type.
    let response = server
        .http
        .post(server.url("/api/games"))
        .header("content-type", "application/x-www-form-urlencoded")
        .body(r#"{"white": {"kind": "human"}, "black": {"kind": "ai", "level": 1}}"#)
        .send()
        .await
        .unwrap();
    let (status, created) = read(response).await;
    assert_eq!(status, 201, "{created}");
    assert_eq!(created["seat"]["color"], "white");
    server.stop().await;
}

#[tokio::test]
async fn an_in_memory_database_works() {
    let db = TestDb::new();
    let mut config = test_config(&db);
    config.storage.database = "sqlite::memory:".into();
    let server = TestServer::start(config).await;
    let (id, white, black) = server.human_game(json!({})).await;
    server.play(&id, &white, "e2e4").await;
    server.play(&id, &black, "e7e5").await;
    let (_, listed) = server.get("/api/games").await;
    assert_eq!(listed["games"].as_array().unwrap().len(), 1);
    server.stop().await;
}

#[tokio::test]
async fn levels_health_and_web_client() {
    let db = TestDb::new();
    let config = test_config(&db);
    std::fs::create_dir_all(&config.web_dir).unwrap();
    std::fs::write(
        config.web_dir.join("index.html"),
        "<!doctype html><title>Rookery</title>",
    )
    .unwrap();
    std::fs::write(config.web_dir.join("app.js"), "export {};").unwrap();
    let server = TestServer::start(config).await;

    let (status, levels) = server.get("/api/levels").await;
    assert_eq!(status, 200);
    let levels = levels.as_array().unwrap();
    assert_eq!(levels.len(), 8);
    for (i, level) in levels.iter().enumerate() {
        assert_eq!(level["level"], i + 1);
        assert!(level["name"].as_str().is_some_and(|n| !n.is_empty()));
        assert!(level["elo"].is_null() || level["elo"].is_u64());
        assert!(level["max_think_ms"].is_u64());
        assert!(level["temperature_cp"].is_u64());
    }
    let (status, _, body) = server.get_text("/healthz").await;
    assert_eq!((status, body.as_str()), (200, "ok"));

    for (page, expected) in [
        ("/", 200),
        ("/watch", 200),
        ("/scoreboard", 200),
        ("/teams", 200),
        ("/help", 200),
        // The page of a thing that is not there is the page all the same,
        // with status 404 (issue 36).
        ("/games/3f1c8a44-0000-4000-8000-000000000000", 404),
        ("/team/rookery-knights", 404),
        // A Swiss's page shares its route with its TRF file.
        ("/swiss/AbCd1234", 404),
    ] {
        let (status, content_type, body) = server.get_text(page).await;
        assert_eq!(status, expected, "{page}");
        assert!(
            content_type.starts_with("text/html"),
            "{page}: {content_type}"
        );
        assert!(body.contains("<title>Rookery</title>"), "{page}");
    }
    let (status, content_type, _) = server.get_text("/swiss/AbCd1234.trf").await;
    assert_eq!(status, 404, "no such tournament: {content_type}");
    let (status, content_type, _) = server.get_text("/app.js").await;
    assert_eq!(status, 200);
    assert!(content_type.contains("javascript"), "{content_type}");
    let (status, _, _) = server.get_text("/missing.css").await;
    assert_eq!(status, 404);
    server.stop().await;
}

#[tokio::test]
async fn many_spectators_see_the_same_moves() {
    let db = TestDb::new();
    let server = TestServer::start(test_config(&db)).await;
    let (id, white, black) = server.human_game(json!({})).await;
    let mut watchers = Vec::new();
    for _ in 0..20 {
        let mut ws = WsClient::connect(&server, &id, None).await;
        ws.next_state().await;
        watchers.push(ws);
    }
    let spectators = server.state(&id).await["spectators"].as_u64().unwrap();
    assert_eq!(spectators, 20);
    let line = [
        "g1f3", "g8f6", "f3g1", "f6g8", "g1f3", "g8f6", "f3g1", "f6g8",
    ];
    for (ply, uci) in line.iter().enumerate() {
        let token = if ply % 2 == 0 { &white } else { &black };
        server.play(&id, token, uci).await;
    }
    // Back to the start position three times: a threefold repetition.
    for ws in &mut watchers {
        let last = ws
            .state_where("the end", |s| s["status"] == "finished")
            .await;
        assert_eq!(moves(&last), line);
        assert_eq!(last["termination"], "threefold_repetition");
        assert_eq!(last["result"], "1/2-1/2");
    }
    server.stop().await;
}

/// Every `[%clk h:mm:ss]` of a PGN's movetext, in order.
fn pgn_clocks(pgn: &str) -> Vec<String> {
    pgn.split("[%clk ")
        .skip(1)
        .map(|rest| rest.split(']').next().unwrap_or_default().to_string())
        .collect()
}

/// The value of tag `name` in a PGN, as written.
fn pgn_tag(pgn: &str, name: &str) -> Option<String> {
    let start = format!("[{name} \"");
    pgn.lines()
        .find_map(|line| line.strip_prefix(start.as_str()))
        .map(|rest| rest.trim_end_matches("\"]").to_string())
}

fn clock_text(ms: u64) -> String {
    let seconds = ms / 1000;
    format!(
        "{}:{:02}:{:02}",
        seconds / 3600,
        seconds / 60 % 60,
        seconds % 60
    )
}

/// `YYYY.MM.DD` and `HH:MM:SS` (UTC) of Unix milliseconds.
fn utc_date_time(unix_ms: i64) -> (String, String) {
    let days = unix_ms.div_euclid(86_400_000);
    let seconds = unix_ms.div_euclid(1000).rem_euclid(86_400);
    // Days to a civil date (Howard Hinnant's algorithm).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    (
        format!("{year:04}.{month:02}.{day:02}"),
        format!(
            "{:02}:{:02}:{:02}",
            seconds / 3600,
            seconds / 60 % 60,
            seconds % 60
        ),
    )
}

/// Issue 25: the export of a timed, rated game between registered players
/// carries each move's clock as `[%clk]` (the mover's clock the game showed
/// after it), `UTCDate`/`UTCTime` of its start, the seats' ratings as
/// `WhiteElo`/`BlackElo` and the game's address under `--public-url` as
/// `Site`; lichess's export route carries the same.
#[tokio::test]
async fn pgn_export_carries_clocks_start_ratings_and_site() {
    let db = TestDb::new();
    let mut config = test_config(&db);
    config.site.public_url = Some("https://chess.example.org/".into());
    let server = TestServer::start(config).await;
    let alice = register(&server, "alice").await;
    let bob = register(&server, "bob").await;
    let game_between = |white: String, black: String| {
        let server = &server;
        async move {
            let (game, white_seat) = server
                .create_game(
                    json!({"white": {"kind": "human"}, "black": {"kind": "human"}, "as": "white",
                           "clock": {"initial": 300, "increment": 0}}),
                    Some(&white),
                )
                .await;
            let id = game["id"].as_str().expect("id").to_string();
            let (status, joined) = server
                .post(&format!("/api/games/{id}/join"), Some(&black), None)
                .await;
            assert_eq!(status, 200, "{joined}");
            let black_seat = joined["seat"]["token"].as_str().expect("seat").to_string();
            (id, white_seat.expect("white seat"), black_seat)
        }
    };
    // A first rated game, so the two ratings differ.
    let (first, white, black) = game_between(alice.clone(), bob.clone()).await;
    for (ply, uci) in ["f2f3", "e7e5", "g2g4", "d8h4"].iter().enumerate() {
        server
            .play(&first, if ply % 2 == 0 { &white } else { &black }, uci)
            .await;
    }

    let (id, white, black) = game_between(bob.clone(), alice.clone()).await;
    let mut shown = Vec::new();
    for (ply, uci) in ["e2e4", "e7e5", "g1f3", "b8c6", "f1c4"].iter().enumerate() {
        if ply >= 2 {
            // Time off the running clocks, so they differ from the start.
            tokio::time::sleep(std::time::Duration::from_millis(1100)).await;
        }
        let state = server
            .play(&id, if ply % 2 == 0 { &white } else { &black }, uci)
            .await;
        let clock = &state["clock"];
        let mover = if ply % 2 == 0 { "white_ms" } else { "black_ms" };
        shown.push(clock_text(clock[mover].as_u64().expect("a clock")));
    }
    assert_ne!(shown[4], shown[0], "the clock ran: {shown:?}");
    let state = server.state(&id).await;
    assert_eq!(state["rated"], true, "{state}");

    let (status, _, pgn) = server.get_text(&format!("/api/games/{id}/pgn")).await;
    assert_eq!(status, 200);
    assert_eq!(pgn_clocks(&pgn), shown, "{pgn}");
    assert!(
        pgn.contains("1. e4 { [%clk "),
        "a clock comment after each move: {pgn}"
    );
    let (date, time) = utc_date_time(state["created_at"].as_i64().expect("created_at"));
    assert_eq!(pgn_tag(&pgn, "UTCDate"), Some(date), "{pgn}");
    assert_eq!(pgn_tag(&pgn, "UTCTime"), Some(time), "{pgn}");
    let rating = |side: &str| state[side]["rating"].as_i64().expect("rating").to_string();
    assert_ne!(rating("white"), rating("black"), "{state}");
    assert_eq!(pgn_tag(&pgn, "WhiteElo"), Some(rating("white")), "{pgn}");
    assert_eq!(pgn_tag(&pgn, "BlackElo"), Some(rating("black")), "{pgn}");
    assert_eq!(
        pgn_tag(&pgn, "Site"),
        Some(format!("https://chess.example.org/games/{id}")),
        "{pgn}"
    );
    let parsed = read_pgn(&pgn).expect("the export parses");
    assert_eq!(parsed.game.moves().len(), 5);

    // lichess's export route: the same tags and clocks.
    let (status, _, lichess) = server.get_text(&format!("/game/export/{id}")).await;
    assert_eq!(status, 200);
    assert_eq!(pgn_clocks(&lichess), shown, "{lichess}");
    for tag in ["UTCDate", "UTCTime", "WhiteElo", "BlackElo", "Site"] {
        assert_eq!(pgn_tag(&lichess, tag), pgn_tag(&pgn, tag), "{tag}");
    }
    server.stop().await;
}

/// Issue 25: an untimed game's export has no `[%clk]`, anonymous seats no
/// `WhiteElo`/`BlackElo`, and without `--public-url` `Site` stays
/// `Rookery`; `UTCDate`/`UTCTime` are there all the same.
#[tokio::test]
async fn pgn_export_of_an_untimed_anonymous_game() {
    let db = TestDb::new();
    let server = TestServer::start(test_config(&db)).await;
    let (id, white, black) = server.human_game(json!({})).await;
    server.play(&id, &white, "e2e4").await;
    server.play(&id, &black, "e7e5").await;
    let (status, _, pgn) = server.get_text(&format!("/api/games/{id}/pgn")).await;
    assert_eq!(status, 200);
    assert!(!pgn.contains("%clk"), "{pgn}");
    assert!(pgn.contains("\n1. e4 e5 *"), "{pgn}");
    assert_eq!(pgn_tag(&pgn, "Site").as_deref(), Some("Rookery"));
    assert_eq!(pgn_tag(&pgn, "WhiteElo"), None, "{pgn}");
    assert_eq!(pgn_tag(&pgn, "BlackElo"), None, "{pgn}");
    let state = server.state(&id).await;
    let (date, time) = utc_date_time(state["created_at"].as_i64().expect("created_at"));
    assert_eq!(pgn_tag(&pgn, "UTCDate"), Some(date), "{pgn}");
    assert_eq!(pgn_tag(&pgn, "UTCTime"), Some(time), "{pgn}");
    server.stop().await;
}

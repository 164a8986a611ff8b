//! The adversarial suite (issue 8, "Hostile input"): one test per hostile
//! case, each checking the documented answer and that every game is left
//! as it was. Each prints one line with its measured figure, for the note.
//!

mod support;

use std::time::Duration;

use futures_util::StreamExt;
use serde_json::{json, Value};
use support::*;
use tokio::io::AsyncWriteExt;
use tokio::net::TcpStream;
use tokio_tungstenite::tungstenite::Message;

/// The cases run one at a time: several count this process's open file
/// descriptors, which the others' sockets would blur.
static ONE_AT_A_TIME: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

/// The parts of a state a refused or repeated request must not change.
fn essence(state: &Value) -> Value {
    json!([
        state["status"],
        state["white"]["name"],
        state["white"]["taken"],
        state["black"]["name"],
        state["black"]["taken"],
        state["moves"],
        state["result"],
        state["draw_offer"],
    ])
}

/// Open file descriptors of this process (the server runs in it).
fn open_fds() -> usize {
    std::fs::read_dir("/proc/self/fd").map_or(0, |dir| dir.count())
}

#[tokio::test]
async fn three_hundred_requests_on_fresh_connections_share_one_budget() {
    let _alone = ONE_AT_A_TIME.lock().await;
    let db = TestDb::new();
    let mut config = test_config(&db);
    config.http.rate_limit = 0.001;
    config.http.rate_burst = 20;
    // The test reads the game afterwards as another client, through a
    // trusted proxy; the flood comes straight from its own address.
    config.http.trusted_proxies = vec!["127.0.0.1".parse().expect("range")];
    let server = TestServer::start(config).await;
    let (id, white, _) = server.human_game(json!({})).await;
    let before = essence(&server.state(&id).await);
    // A client that opens a fresh connection for every request.
    let http = reqwest::Client::builder()
        .pool_max_idle_per_host(0)
        .build()
        .expect("HTTP client");
    let (mut served, mut limited) = (0, 0);
    for _ in 0..300 {
        // An illegal move: served it is a 400, and changes nothing either way.
        let answer = read(
            http.post(server.url(&format!("/api/games/{id}/move")))
                .bearer_auth(&white)
                .json(&json!({"uci": "e2e5"}))
                .send()
                .await
                .expect("POST"),
        )
        .await;
        match answer.0 {
            400 => {
                assert_error(&answer, 400, "illegal_move");
                served += 1;
            }
            _ => {
                assert_error(&answer, 429, "rate_limited");
                limited += 1;
            }
        }
    }
    println!("300 fresh connections from one address: {served} served, {limited} got 429");
    // The burst, less what creating the game took.
    assert!(served <= 20, "{served}");
    assert!(limited >= 280, "{limited}");
    let (status, after) = read(
        server
            .http
            .get(server.url(&format!("/api/games/{id}")))
            .header("x-forwarded-for", "203.0.113.9")
            .send()
            .await
            .expect("GET"),
    )
    .await;
    assert_eq!(status, 200, "{after}");
    assert_eq!(essence(&after), before);
    server.stop().await;
}

#[tokio::test]
async fn two_thousand_half_sent_requests_cannot_hold_descriptors() {
    let _alone = ONE_AT_A_TIME.lock().await;
    let db = TestDb::new();
    let mut config = test_config(&db);
    config.http.header_timeout_ms = 500;
    config.http.max_connections_per_ip = 4_000;
    let server = TestServer::start(config).await;
    let (id, _, _) = server.human_game(json!({})).await;
    let before_state = essence(&server.state(&id).await);
    let fds_before = open_fds();
    let mut held = Vec::new();
    for _ in 0..2_000 {
        let mut stream = TcpStream::connect(server.addr).await.expect("connect");
        stream
            .write_all(b"POST /api/games HTTP/1.1\r\nHost: rookery\r\nContent-Le")
            .await
            .expect("write");
        held.push(stream);
    }
    let fds_peak = open_fds();
    // The server still answers while they hang.
    let (status, _) = server.get("/api/levels").await;
    assert_eq!(status, 200);
    // Each half-sent request is cut at the header timer: the server side
    // of every connection closes, and its descriptors come back.
    let mut closed = 0;
    for mut stream in held {
        let mut buffer = [0u8; 256];
        let read = within(WAIT, "the server to close a half-sent request", async {
            tokio::io::AsyncReadExt::read(&mut stream, &mut buffer).await
        })
        .await;
        assert!(matches!(read, Ok(0) | Err(_)), "{read:?}");
        closed += 1;
    }
    let fds_after = open_fds();
    println!(
        "2000 half-sent requests: fds {fds_before} -> {fds_peak} -> {fds_after}, {closed} closed"
    );
    assert!(fds_after <= fds_before + 20, "{fds_after}");
    assert_eq!(essence(&server.state(&id).await), before_state);
    server.stop().await;
}

#[tokio::test]
async fn five_hundred_draw_offers_on_twenty_sockets_are_one_offer() {
    let _alone = ONE_AT_A_TIME.lock().await;
    let db = TestDb::new();
    let mut config = test_config(&db);
    config.ws.ws_rate_limit = 10_000.0;
    config.ws.ws_rate_burst = 10_000;
    let server = TestServer::start(config).await;
    let (id, white, black) = server.human_game(json!({})).await;
    server.play(&id, &white, "e2e4").await;
    let mut watcher = WsClient::connect(&server, &id, None).await;
    watcher.next_state().await;
    let mut sockets = Vec::new();
    for _ in 0..20 {
        let mut ws = WsClient::connect(&server, &id, Some(&black)).await;
        ws.next_state().await;
        sockets.push(ws);
    }
    let senders = sockets.into_iter().map(|mut ws| {
        tokio::spawn(async move {
            for _ in 0..25 {
                ws.send(json!({"type": "draw"})).await;
            }
            // A message with a known answer: every offer before it is done.
            ws.send(json!({"type": "no such type"})).await;
            within(WAIT, "the marker's error", async {
                loop {
                    let message = ws.next_message().await;
                    if message["type"] == "error" && message["code"] == "bad_request" {
                        break;
                    }
                    assert_ne!(message["type"], "error", "{message}");
                }
            })
            .await;
            ws
        })
    });
    let mut sockets = Vec::new();
    for sender in senders.collect::<Vec<_>>() {
        sockets.push(sender.await.expect("sender"));
    }
    let state = server.state(&id).await;
    assert_eq!(state["draw_offer"], "black");
    assert_eq!(moves(&state), ["e2e4"]);
    assert_eq!(state["status"], "active");
    // The watcher saw one state with the offer, then the next move: the
    // 499 repeated offers were not broadcast.
    server.play(&id, &black, "e7e5").await;
    let mut offers = 0;
    within(WAIT, "the move after the offers", async {
        loop {
            let message = watcher.next_message().await;
            if message["type"] != "state" {
                continue;
            }
            let game = &message["game"];
            if moves(game).len() == 2 {
                break;
            }
            if game["draw_offer"] == "black" {
                offers += 1;
            }
        }
    })
    .await;
    println!("500 draw offers on 20 sockets: {offers} state broadcast with the offer");
    assert_eq!(offers, 1);
    drop(sockets);
    server.stop().await;
}

#[tokio::test]
async fn seat_theft_from_the_public_list_fails() {
    let _alone = ONE_AT_A_TIME.lock().await;
    let db = TestDb::new();
    let server = TestServer::start(test_config(&db)).await;
    // Three friend games waiting for their friends, one open seek.
    let mut private = Vec::new();
    for _ in 0..3 {
        let (_, id) = server
            .create_human(json!({"visibility": "private"}), None)
            .await;
        private.push(id);
    }
    let (_, seek) = server
        .create_human(json!({"visibility": "open"}), None)
        .await;
    // A thief reads the public list: private games are not on it (issue
    // 21). Then the thief tries every waiting game, the private ones by
    // their ids too (as if the links had leaked).
    let (_, listed) = server.get("/api/games?status=waiting").await;
    let mut listed: Vec<String> = listed["games"]
        .as_array()
        .expect("games")
        .iter()
        .map(|game| game["id"].as_str().expect("id").to_string())
        .collect();
    assert_eq!(
        listed,
        std::slice::from_ref(&seek),
        "only the open seek is listed"
    );
    listed.extend(private.iter().cloned());
    let mut refused = 0;
    for id in &listed {
        let answer = server
            .post(&format!("/api/games/{id}/join"), None, None)
            .await;
        if *id == seek {
            assert_eq!(answer.0, 200, "the open seek is for anyone");
        } else {
            assert_error(&answer, 403, "forbidden");
            refused += 1;
        }
    }
    println!("seat theft: {refused} of 3 private games refused the thief");
    for id in &private {
        let state = server.state(id).await;
        assert_eq!(state["status"], "waiting", "{id} keeps its free seat");
        assert_eq!(state["black"]["taken"], false);
    }
    server.stop().await;
}

#[tokio::test]
async fn a_player_cannot_join_their_own_game() {
    let _alone = ONE_AT_A_TIME.lock().await;
    let db = TestDb::new();
    let server = TestServer::start(test_config(&db)).await;
    let alice = server.register("alice").await;
    let bob = server.register("bob").await;

    // Open game: the id is enough, but not for alice against herself.
    let (_, open_id) = server.create_human(json!({}), Some(&alice)).await;
    // Private game: not even with the invite.
    let (private, private_id) = server
        .create_human(json!({"visibility": "private"}), Some(&alice))
        .await;
    let with_invite = Some(json!({ "invite": private["invite"] }));
    for (id, body) in [(open_id, None), (private_id, with_invite)] {
        let before = essence(&server.state(&id).await);
        let join = format!("/api/games/{id}/join");
        let answer = server.post(&join, Some(&alice), body.clone()).await;
        assert_error(&answer, 409, "same_player");
        assert_eq!(essence(&server.state(&id).await), before);
        // Someone else takes the seat.
        let (status, joined) = server.post(&join, Some(&bob), body).await;
        assert_eq!(status, 200, "{joined}");
        assert_eq!(joined["game"]["black"]["name"], "bob");
    }
    println!("self-join: refused 409 same_player on an open and a private game");
    // Anonymous seats are different holders by definition.
    let (_, id) = server.create_human(json!({}), None).await;
    let (status, _) = server
        .post(&format!("/api/games/{id}/join"), None, None)
        .await;
    assert_eq!(status, 200);
    server.stop().await;
}

#[tokio::test]
async fn a_custom_start_mate_farm_scores_nothing() {
    let _alone = ONE_AT_A_TIME.lock().await;
    let db = TestDb::new();
    let server = TestServer::start(test_config(&db)).await;
    let farmer = server.register("farmer").await;
    let stooge = server.register("stooge").await;
    // White mates at once: the back-rank Ra1-a8#.
    let fen = "6k1/5ppp/8/8/8/8/8/R5K1 w - - 0 1";
    for _ in 0..20 {
        let (created, id) = server
            .create_human(json!({ "fen": fen }), Some(&farmer))
            .await;
        assert_eq!(created["game"]["rated"], false);
        let white = created["seat"]["token"]
            .as_str()
            .expect("token")
            .to_string();
        let (status, _) = server
            .post(&format!("/api/games/{id}/join"), Some(&stooge), None)
            .await;
        assert_eq!(status, 200);
        let mated = server.play(&id, &white, "a1a8").await;
        assert_eq!(mated["termination"], "checkmate");
    }
    let (_, board) = server.get("/api/scoreboard").await;
    println!(
        "custom-FEN mate farm: 20 mates, main board {}, casual {}",
        board["colors"], board["casual"]
    );
    assert_eq!(board["colors"], json!({"white": 0, "black": 0, "draws": 0}));
    assert_eq!(board["players"], json!([]));
    assert_eq!(board["casual"]["white"], 20);
    server.stop().await;
}

#[tokio::test]
async fn a_half_millisecond_clock_is_casual_and_flags_cleanly() {
    let _alone = ONE_AT_A_TIME.lock().await;
    let db = TestDb::new();
    let server = TestServer::start(test_config(&db)).await;
    let (id, white, black) = server
        .human_game(json!({"clock": {"initial": 0.0005, "increment": 0}}))
        .await;
    let state = server.state(&id).await;
    assert_eq!(state["rated"], false);
    // Each side's first move is free (the clocks wait for it).
    server.play(&id, &white, "e2e4").await;
    server.play(&id, &black, "e7e5").await;
    // Then White's flag falls before (or as) the move arrives: timeout,
    // not a move, and the game is over once.
    let answer = server
        .post(
            &format!("/api/games/{id}/move"),
            Some(&white),
            Some(json!({"uci": "g1f3"})),
        )
        .await;
    let finished = server
        .wait_state(&id, "the flag", |s| s["status"] == "finished")
        .await;
    println!(
        "0.5 ms clock: move answered {}, game ended by {}",
        answer.0, finished["termination"]
    );
    assert_eq!(finished["termination"], "timeout");
    assert_eq!(finished["clock"]["white_ms"], 0);
    assert_eq!(moves(&finished), ["e2e4", "e7e5"]);
    if answer.0 != 200 {
        assert_error(&answer, 409, "game_over");
    }
    server.stop().await;
}

#[tokio::test]
async fn spectator_churn_leaves_nothing_behind() {
    let _alone = ONE_AT_A_TIME.lock().await;
    let db = TestDb::new();
    let server = TestServer::start(test_config(&db)).await;
    let (id, white, _) = server.human_game(json!({})).await;
    server.play(&id, &white, "d2d4").await;
    let before = essence(&server.state(&id).await);
    let fds_before = open_fds();
    // 1,000 spectators open and close, 50 at a time.
    for _ in 0..20 {
        let mut batch = Vec::new();
        for _ in 0..50 {
            let mut ws = WsClient::connect(&server, &id, None).await;
            ws.next_state().await;
            batch.push(ws);
        }
        drop(batch);
    }
    let settled = server
        .wait_state(&id, "every spectator gone", |s| s["spectators"] == 0)
        .await;
    assert_eq!(essence(&settled), before);
    // Closing is asynchronous on both sides: wait for the descriptors.
    let fds_after = within(WAIT, "descriptors to come back", async {
        loop {
            let now = open_fds();
            if now <= fds_before + 10 {
                return now;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    })
    .await;
    println!("1000 spectators churned: spectators 0, fds {fds_before} -> {fds_after}");
    server.stop().await;
}

#[tokio::test]
async fn a_malformed_percent_path_is_a_json_error() {
    let _alone = ONE_AT_A_TIME.lock().await;
    let db = TestDb::new();
    let server = TestServer::start(test_config(&db)).await;
    let (id, white, _) = server.human_game(json!({})).await;
    let before = essence(&server.state(&id).await);
    let cases = [
        ("GET", "/api/games/%FF"),
        ("GET", "/api/games/%FF/pgn"),
        ("POST", "/api/games/%FF/move"),
        ("POST", "/api/games/%FF/join"),
        ("GET", "/api/%FF"),
        ("GET", "/api/games/%ZZ"),
    ];
    let mut codes = Vec::new();
    for (method, path) in cases {
        let request = match method {
            "GET" => server.http.get(server.url(path)),
            _ => server
                .http
                .post(server.url(path))
                .bearer_auth(&white)
                .json(&json!({"uci": "e2e4"})),
        };
        let answer = read(request.send().await.expect("request")).await;
        let code = answer.1["error"]["code"].as_str().unwrap_or("").to_string();
        assert!(
            answer.0 == 404 && code == "not_found" || answer.0 == 400 && code == "bad_request",
            "{method} {path}: {answer:?}"
        );
        assert!(answer.1["error"]["message"]
            .as_str()
            .is_some_and(|m| !m.is_empty()));
        codes.push(format!("{method} {path} {}", answer.0));
    }
    println!("malformed paths: {}", codes.join(", "));
    assert_eq!(essence(&server.state(&id).await), before);
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn five_hundred_spectators_that_never_read_are_closed_and_the_game_goes_on() {
    let _alone = ONE_AT_A_TIME.lock().await;
    let db = TestDb::new();
    let mut config = test_config(&db);
    config.ws.ws_max_lag = 4;
    // Small kernel buffers on both ends: a reader that takes nothing
    // blocks the server's writes after a few states, not megabytes.
    let server = TestServer::start_on(small_buffer_listener(), config).await;
    let (id, white, black) = server.human_game(json!({})).await;
    let fds_before = open_fds();
    let mut sleepers = Vec::new();
    for _ in 0..500 {
        sleepers.push(small_buffer_spectator(&server, &id).await);
    }
    server
        .wait_state(&id, "500 spectators counted", |s| s["spectators"] == 500)
        .await;
    let fds_peak = open_fds();
    // The players play on while 500 spectators read nothing; every move is
    // acknowledged.
    let line = long_line(120);
    for (ply, uci) in line.iter().enumerate() {
        let state = server
            .play(&id, if ply % 2 == 0 { &white } else { &black }, uci)
            .await;
        assert_eq!(moves(&state).len(), ply + 1);
    }
    // The server let go of every one of them (4008 or the write timeout).
    server
        .wait_state(&id, "the sleepers dropped", |s| s["spectators"] == 0)
        .await;
    // What a sleeper finds when it reads at last ends with a close (or the
    // connection cut when even the close frame could not be sent).
    let mut closed_4008 = 0;
    for mut sleeper in sleepers {
        let ended = within(WAIT, "a sleeper's end", async {
            loop {
                match sleeper.next().await {
                    Some(Ok(Message::Close(frame))) => return frame.map(|f| u16::from(f.code)),
                    Some(Ok(_)) => continue,
                    Some(Err(_)) | None => return None,
                }
            }
        })
        .await;
        if ended == Some(4008) {
            closed_4008 += 1;
        }
    }
    let fds_after = open_fds();
    println!(
        "500 spectators that never read: {closed_4008} closed with 4008 (the rest cut), \
         fds {fds_before} -> {fds_peak} -> {fds_after}"
    );
    // A fresh spectator is up to date, and the game is as played.
    let mut fresh = WsClient::connect(&server, &id, None).await;
    assert_eq!(moves(&fresh.next_state().await), line);
    assert_eq!(server.state(&id).await["status"], "active");
    server.stop().await;
}

const FINISHED_GAMES: u32 = 100_000;

/// Writes `FINISHED_GAMES` finished games between 50 registered players
/// straight into the (migrated) database: one statement each, so seeding
/// takes a second, not a hundred thousand requests.
async fn seed_finished_games(db: &TestDb) {
    let pool = sqlx::SqlitePool::connect(&db.url())
        .await
        .expect("open the test database");
    sqlx::query(
        "WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i < 49)
         INSERT INTO players (id, name, name_key, token_hash, created_at)
         SELECT printf('00000000-0000-4000-8000-%012d', i), 'player' || i, 'player' || i,
                printf('%064d', i), 0
         FROM n",
    )
    .execute(&pool)
    .await
    .expect("seed players");
    sqlx::query(
        "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ?)
         INSERT INTO games (id, white_kind, white_player_id, black_kind, black_player_id,
                            initial_fen, fen, status, result, termination,
                            created_at, updated_at, finished_at)
         SELECT printf('10000000-0000-4000-8000-%012d', i),
                'human', printf('00000000-0000-4000-8000-%012d', i % 50),
                'human', printf('00000000-0000-4000-8000-%012d', (i + 1) % 50),
                'rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1',
                'rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1',
                'finished',
                CASE i % 3 WHEN 0 THEN '1-0' WHEN 1 THEN '0-1' ELSE '1/2-1/2' END,
                CASE i % 3 WHEN 2 THEN 'agreement' ELSE 'resignation' END,
                i, i, i
         FROM n",
    )
    .bind(FINISHED_GAMES)
    .execute(&pool)
    .await
    .expect("seed games");
    pool.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hundred_thousand_finished_games_while_lists_are_hammered() {
    let _alone = ONE_AT_A_TIME.lock().await;
    let db = TestDb::new();
    // A first start creates the schema.
    TestServer::start(test_config(&db)).await.stop().await;
    let seeding = std::time::Instant::now();
    seed_finished_games(&db).await;
    let seeded_in = seeding.elapsed();
    let server = TestServer::start(test_config(&db)).await;
    let (id, white, black) = server.human_game(json!({})).await;

    // Readers hammer the lists and the scoreboard while a game is played.
    let started = std::time::Instant::now();
    let readers: Vec<_> = (0..8)
        .map(|reader| {
            let http = server.http.clone();
            let base = server.url("");
            tokio::spawn(async move {
                let paths = [
                    "/api/games?status=finished&limit=100",
                    "/api/scoreboard",
                    "/api/games?limit=100",
                    "/api/games?status=active",
                ];
                for round in 0..15 {
                    let path = paths[(reader + round) % paths.len()];
                    let response = http.get(format!("{base}{path}")).send().await.expect("GET");
                    let (status, body) = read(response).await;
                    assert_eq!(status, 200, "{path}: {body}");
                    if path == "/api/scoreboard" {
                        let colors = &body["colors"];
                        let total = colors["white"].as_u64().unwrap_or(0)
                            + colors["black"].as_u64().unwrap_or(0)
                            + colors["draws"].as_u64().unwrap_or(0);
                        assert!(total >= u64::from(FINISHED_GAMES), "{colors}");
                    } else if path.contains("limit=100") {
                        assert_eq!(body["games"].as_array().map(Vec::len), Some(100));
                    }
                }
            })
        })
        .collect();
    let line = long_line(20);
    for (ply, uci) in line.iter().enumerate() {
        let state = server
            .play(&id, if ply % 2 == 0 { &white } else { &black }, uci)
            .await;
        assert_eq!(moves(&state).len(), ply + 1);
    }
    let played_in = started.elapsed();
    for reader in readers {
        reader.await.expect("reader");
    }
    let read_in = started.elapsed();
    println!(
        "100k finished games (seeded in {} ms): 120 list/scoreboard reads in {} ms, \
         20 moves played meanwhile in {} ms (debug build)",
        seeded_in.as_millis(),
        read_in.as_millis(),
        played_in.as_millis()
    );
    assert_eq!(moves(&server.state(&id).await), line);
    server.stop().await;
}

#[tokio::test]
async fn a_locked_database_across_a_flag_fall_records_it_once_released() {
    let _alone = ONE_AT_A_TIME.lock().await;
    let db = TestDb::new();
    let mut config = test_config(&db);
    config.storage.db_busy_timeout_ms = 100;
    let server = TestServer::start(config).await;
    let (id, white, black) = server
        .human_game(json!({"clock": {"initial": 1, "increment": 0}}))
        .await;
    // The clocks run once each side has made its first move.
    server.play(&id, &white, "e2e4").await;
    server.play(&id, &black, "e7e5").await;
    server.play(&id, &white, "g1f3").await;
    let mut watcher = WsClient::connect(&server, &id, None).await;
    assert_eq!(moves(&watcher.next_state().await), ["e2e4", "e7e5", "g1f3"]);

    // Black's flag falls while another connection holds the database.
    let lock = Lock::take(&db).await;
    tokio::time::sleep(Duration::from_millis(2_000)).await;
    // The fall could not be stored: the game shows what the database holds
    // (still on, black's time gone), and a move is refused, not played.
    let during = server.state(&id).await;
    assert_eq!(during["status"], "active", "{during}");
    assert_eq!(moves(&during), ["e2e4", "e7e5", "g1f3"]);
    let refused = server
        .post(
            &format!("/api/games/{id}/move"),
            Some(&black),
            Some(json!({"uci": "b8c6"})),
        )
        .await;
    assert_error(&refused, 503, "unavailable");
    let released = std::time::Instant::now();
    lock.release().await;

    // Once the lock is gone the timeout is stored and told, once.
    let ended = watcher
        .state_where("the flag", |s| s["status"] == "finished")
        .await;
    let recorded_in = released.elapsed();
    assert_eq!(ended["termination"], "timeout");
    assert_eq!(ended["result"], "1-0");
    assert_eq!(moves(&ended), ["e2e4", "e7e5", "g1f3"]);
    println!(
        "locked database across a flag: timeout stored {} ms after the lock was released",
        recorded_in.as_millis()
    );
    server.stop().await;
    let server = TestServer::start(test_config(&db)).await;
    let stored = server.state(&id).await;
    assert_eq!(stored["termination"], "timeout");
    assert_eq!(moves(&stored), ["e2e4", "e7e5", "g1f3"]);
    server.stop().await;
}

/// AI v AI games that keep one search thread busy: a master (level 8)
/// on a clock thinks for a good fraction of a second per move.
const AI_V_AI_GAMES: usize = 4;

async fn plies(server: &TestServer, id: &str) -> usize {
    moves(&server.state(id).await).len()
}

async fn total_plies(server: &TestServer, ids: &[String]) -> usize {
    let mut total = 0;
    for id in ids {
        total += plies(server, id).await;
    }
    total
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_humans_ai_answers_before_queued_ai_v_ai_searches() {
    let _alone = ONE_AT_A_TIME.lock().await;
    let db = TestDb::new();
    let mut config = test_config(&db);
    config.ai.ai_threads = Some(1);
    config.ai.max_ai_games = Some(AI_V_AI_GAMES);
    config.ai.max_ai_games_per_client = AI_V_AI_GAMES;
    let server = TestServer::start(config).await;

    let mut shows = Vec::new();
    for _ in 0..AI_V_AI_GAMES {
        let (game, _) = server
            .create_game(
                json!({"white": {"kind": "ai", "level": 8}, "black": {"kind": "ai", "level": 8},
                       "clock": {"initial": 30, "increment": 0}}),
                None,
            )
            .await;
        shows.push(game["id"].as_str().expect("id").to_string());
    }
    // With one thread, every AI v AI game now has a search running or
    // queued; wait until they are under way.
    within(WAIT, "the AI v AI games to start moving", async {
        while total_plies(&server, &shows).await < AI_V_AI_GAMES {
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    })
    .await;

    let (game, token) = server
        .create_game(
            json!({"white": {"kind": "human"}, "black": {"kind": "ai", "level": 1}}),
            None,
        )
        .await;
    let id = game["id"].as_str().expect("id").to_string();
    let token = token.expect("seat token");
    // Three rounds: each time, the AI v AI games get at most the one
    // search that was already finishing when the human's came in. First
    // come, first served would run every queued AI v AI search first
    // (three or four of them).
    for (round, uci) in ["e2e4", "g1f3", "f1c4"].into_iter().enumerate() {
        let before = total_plies(&server, &shows).await;
        let asked = std::time::Instant::now();
        let state = server.play(&id, &token, uci).await;
        let ply = moves(&state).len();
        let answered = server
            .wait_state(&id, "the AI's answer", |state: &Value| {
                moves(state).len() > ply || state["status"] == "finished"
            })
            .await;
        assert_eq!(answered["status"], "active", "{answered}");
        let between = total_plies(&server, &shows).await - before;
        println!(
            "AI flood, round {round}: the human's AI answered in {} ms, \
             {between} AI v AI moves meanwhile",
            asked.elapsed().as_millis()
        );
        assert!(
            between <= 1,
            "round {round}: {between} AI v AI moves were played before the human's AI answered"
        );
    }
    server.stop().await;
}

#[tokio::test]
async fn sigterm_with_a_stalled_stream_reader_exits_zero() {
    let _alone = ONE_AT_A_TIME.lock().await;
    let db = TestDb::new();
    let server = SpawnedServer::start(&db.path(), &["--shutdown-grace-ms", "500"]).await;
    let http = reqwest::Client::new();
    // An AI v AI game writes state after state into the stream.
    let created: Value = http
        .post(format!("{}/api/games", server.base))
        .json(&json!({"white": {"kind": "ai", "level": 1}, "black": {"kind": "ai", "level": 1}}))
        .send()
        .await
        .expect("POST")
        .json()
        .await
        .expect("JSON");
    let id = created["game"]["id"].as_str().unwrap().to_string();
    // A reader with a tiny receive buffer that never reads.
    let addr: std::net::SocketAddr = server.base.trim_start_matches("http://").parse().unwrap();
    let socket = tokio::net::TcpSocket::new_v4().unwrap();
    socket.set_recv_buffer_size(1024).unwrap();
    let mut stalled = socket.connect(addr).await.unwrap();
    stalled
        .write_all(format!("GET /api/games/{id}/stream HTTP/1.1\r\nHost: test\r\n\r\n").as_bytes())
        .await
        .unwrap();
    // Let the states pile up in the socket's buffers.
    within(WAIT, "the AI v AI game to play on", async {
        loop {
            let state: Value = http
                .get(format!("{}/api/games/{id}", server.base))
                .send()
                .await
                .unwrap()
                .json()
                .await
                .unwrap();
            if moves(&state).len() >= 60 || state["status"] == "finished" {
                break;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    })
    .await;
    // And a client that never finishes sending its request.
    let mut half_sent = tokio::net::TcpStream::connect(addr).await.unwrap();
    half_sent
        .write_all(b"GET /api/games HTTP/1.1\r\nHost: test\r\n")
        .await
        .unwrap();
    let signalled = std::time::Instant::now();
    sigterm(&server.child);
    exits_zero(server.child, "SIGTERM with stalled clients").await;
    println!(
        "SIGTERM with a stalled NDJSON reader and a half-sent request: exit 0 after {} ms \
         (grace 500 ms)",
        signalled.elapsed().as_millis()
    );
    drop(stalled);
    drop(half_sent);
}

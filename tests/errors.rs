//! Every error code of the contract, provoked over HTTP and WebSocket, with
//! the game checked unchanged afterwards.

mod support;

use futures_util::StreamExt;
use serde_json::{json, Value};
use support::*;
use tokio_tungstenite::tungstenite::Message;

/// The parts of a game state that an error must not change (connection
/// counts may move as clients come and go).
fn essence(state: &Value) -> Value {
    json!({
        "status": state["status"], "fen": state["fen"], "moves": state["moves"],
        "turn": state["turn"], "result": state["result"],
        "termination": state["termination"], "draw_offer": state["draw_offer"],
        "white_taken": state["white"]["taken"], "black_taken": state["black"]["taken"],
    })
}

#[tokio::test]
async fn every_http_error_code_leaves_the_game_untouched() {
    let db = TestDb::new();
    let server = TestServer::start(test_config(&db)).await;
    let (id, white, black) = server.human_game(json!({})).await;
    server.play(&id, &white, "e2e4").await;
    let before = essence(&server.state(&id).await);
    let move_path = format!("/api/games/{id}/move");
    let mv = |uci: &str| Some(json!({ "uci": uci }));

    // 400 bad_request: malformed JSON, missing field, wrong type, no body.
    let raw = server
        .http
        .post(server.url(&move_path))
        .bearer_auth(&black)
        .header("content-type", "application/json")
        .body("{\"uci\": ")
        .send()
        .await
        .unwrap();
    assert_error(&read(raw).await, 400, "bad_request");
    assert_error(
        &server
            .post(&move_path, Some(&black), Some(json!({"move": "e7e5"})))
            .await,
        400,
        "bad_request",
    );
    assert_error(
        &server
            .post(&move_path, Some(&black), Some(json!({"uci": 42})))
            .await,
        400,
        "bad_request",
    );
    assert_error(
        &server.post(&move_path, Some(&black), None).await,
        400,
        "bad_request",
    );
    // 400 illegal_move: illegal here, and not a move at all.
    for uci in ["e7e4", "e1e2", "zz", "e7e5q", ""] {
        assert_error(
            &server.post(&move_path, Some(&black), mv(uci)).await,
            400,
            "illegal_move",
        );
    }
    // 401 unauthorized: no token, an unknown token, not a Bearer token.
    assert_error(
        &server.post(&move_path, None, mv("e7e5")).await,
        401,
        "unauthorized",
    );
    assert_error(
        &server
            .post(&move_path, Some("0123456789abcdef"), mv("e7e5"))
            .await,
        401,
        "unauthorized",
    );
    let basic = server
        .http
        .post(server.url(&move_path))
        .header("authorization", format!("Basic {black}"))
        .json(&json!({"uci": "e7e5"}))
        .send()
        .await
        .unwrap();
    assert_error(&read(basic).await, 401, "unauthorized");
    // A player token is not a seat token.
    let (_, player) = server
        .post("/api/players", None, Some(json!({"name": "carol"})))
        .await;
    let carol = player["token"].as_str().unwrap();
    assert_error(
        &server.post(&move_path, Some(carol), mv("e7e5")).await,
        401,
        "unauthorized",
    );
    // 403 forbidden: a seat token of another game.
    let (_other, other_white, _) = server.human_game(json!({})).await;
    assert_error(
        &server
            .post(&move_path, Some(&other_white), mv("e7e5"))
            .await,
        403,
        "forbidden",
    );
    for action in ["resign", "draw"] {
        assert_error(
            &server
                .post(
                    &format!("/api/games/{id}/{action}"),
                    Some(&other_white),
                    None,
                )
                .await,
            403,
            "forbidden",
        );
    }
    // 404 not_found: unknown game, not an id, unknown endpoint.
    let unknown = "6c1f3e7a-1111-4222-8333-944455556666";
    assert_error(
        &server.get(&format!("/api/games/{unknown}")).await,
        404,
        "not_found",
    );
    assert_error(&server.get("/api/games/not-a-uuid").await, 404, "not_found");
    assert_error(
        &server
            .post(
                &format!("/api/games/{unknown}/move"),
                Some(&black),
                mv("e7e5"),
            )
            .await,
        404,
        "not_found",
    );
    assert_error(
        &server.get(&format!("/api/games/{unknown}/pgn")).await,
        404,
        "not_found",
    );
    assert_error(
        &server.get(&format!("/api/games/{unknown}/stream")).await,
        404,
        "not_found",
    );
    assert_error(
        &server
            .post(&format!("/api/games/{unknown}/join"), None, None)
            .await,
        404,
        "not_found",
    );
    assert_error(&server.get("/api/nothing-here").await, 404, "not_found");
    assert_error(&server.get("/api/").await, 404, "not_found");
    assert_error(&server.get(&move_path).await, 405, "method_not_allowed");
    // 409 not_your_turn.
    assert_error(
        &server.post(&move_path, Some(&white), mv("d2d4")).await,
        409,
        "not_your_turn",
    );
    // 409 seat_taken.
    assert_error(
        &server
            .post(&format!("/api/games/{id}/join"), None, None)
            .await,
        409,
        "seat_taken",
    );
    // 413 too_large.
    let huge = json!({ "uci": "e7e5", "padding": "x".repeat(64 * 1024) });
    assert_error(
        &server.post(&move_path, Some(&black), Some(huge)).await,
        413,
        "too_large",
    );

    assert_eq!(
        essence(&server.state(&id).await),
        before,
        "errors changed the game"
    );
    // The game still works.
    server.play(&id, &black, "e7e5").await;

    // 409 game_over: anything after the end.
    let (_, resigned) = server
        .post(&format!("/api/games/{id}/resign"), Some(&white), None)
        .await;
    assert_eq!(resigned["termination"], "resignation");
    let finished = essence(&server.state(&id).await);
    assert_error(
        &server.post(&move_path, Some(&white), mv("d2d4")).await,
        409,
        "game_over",
    );
    assert_error(
        &server.post(&move_path, Some(&black), mv("d7d5")).await,
        409,
        "game_over",
    );
    for action in ["resign", "draw"] {
        assert_error(
            &server
                .post(&format!("/api/games/{id}/{action}"), Some(&black), None)
                .await,
            409,
            "game_over",
        );
    }
    assert_eq!(essence(&server.state(&id).await), finished);
    server.stop().await;
}

#[tokio::test]
async fn bad_requests_create_nothing() {
    let db = TestDb::new();
    let server = TestServer::start(test_config(&db)).await;
    let human = json!({"kind": "human"});
    let bad_games = [
        json!({"white": {"kind": "robot"}, "black": human}),
        json!({"white": {"kind": "ai", "level": 9}, "black": human}),
        json!({"white": {"kind": "ai", "level": 0}, "black": human}),
        json!({"white": {"kind": "ai"}, "black": human}),
        json!({"white": human}),
        json!({"white": human, "black": human, "fen": "not a fen"}),
        json!({"white": human, "black": human, "fen": "8/8/8/8/8/8/8/8 w - - 0 1"}),
        json!({"white": human, "black": human, "clock": {"initial": -5, "increment": 0}}),
        json!({"white": human, "black": human, "clock": {"initial": 0, "increment": 0}}),
        json!({"white": human, "black": human, "clock": {"initial": 60, "increment": 1000}}),
        json!({"white": human, "black": human, "as": "green"}),
        json!({"white": human, "black": {"kind": "ai", "level": 2}, "as": "black"}),
        json!({"white": {"kind": "ai", "level": 1}, "black": {"kind": "ai", "level": 1}, "as": "white"}),
        json!([1, 2, 3]),
    ];
    for body in bad_games {
        let answer = server.post("/api/games", None, Some(body.clone())).await;
        assert_error(&answer, 400, "bad_request");
    }
    // An unknown player token when creating is refused, not made anonymous.
    assert_error(
        &server
            .post(
                "/api/games",
                Some("ffffffffffffffffffffffffffffffff"),
                Some(json!({"white": human, "black": human})),
            )
            .await,
        401,
        "unauthorized",
    );
    let (_, all) = server.get("/api/games").await;
    assert_eq!(all["games"], json!([]), "no game was created");

    // Players: bad names, and names taken ignoring case.
    for name in ["", "a very long name indeed!", "<script>", "bob bob", "ünï"] {
        assert_error(
            &server
                .post("/api/players", None, Some(json!({ "name": name })))
                .await,
            400,
            "bad_request",
        );
    }
    assert_error(
        &server.post("/api/players", None, Some(json!({}))).await,
        400,
        "bad_request",
    );
    let (status, _) = server
        .post("/api/players", None, Some(json!({"name": "Dave"})))
        .await;
    assert_eq!(status, 201);
    assert_error(
        &server
            .post("/api/players", None, Some(json!({"name": "dave"})))
            .await,
        409,
        "name_taken",
    );
    assert_error(
        &server
            .post("/api/players", None, Some(json!({"name": "DAVE"})))
            .await,
        409,
        "name_taken",
    );
    // Bad list queries.
    assert_error(
        &server.get("/api/games?status=sleeping").await,
        400,
        "bad_request",
    );
    assert_error(&server.get("/api/games?limit=0").await, 400, "bad_request");
    assert_error(
        &server.get("/api/games?limit=lots").await,
        400,
        "bad_request",
    );
    server.stop().await;
}

#[tokio::test]
async fn websocket_errors_keep_the_connection_and_the_game() {
    let db = TestDb::new();
    let server = TestServer::start(test_config(&db)).await;
    let (id, white, black) = server.human_game(json!({})).await;
    let mut ws = WsClient::connect(&server, &id, Some(&black)).await;
    ws.next_state().await;
    let before = essence(&server.state(&id).await);

    ws.send_raw(Message::text("{not json")).await;
    ws.expect_error("bad_request").await;
    ws.send(json!({"type": "castle"})).await;
    ws.expect_error("bad_request").await;
    ws.send(json!({"type": "move"})).await;
    ws.expect_error("bad_request").await;
    ws.send_raw(Message::binary(vec![1u8, 2, 3])).await;
    ws.expect_error("bad_request").await;
    ws.send(json!({"type": "move", "uci": "e7e5"})).await;
    ws.expect_error("not_your_turn").await;
    // Over the configured message size (4 KiB), under the hard cap: an
    // error, and the connection stays.
    ws.send(json!({"type": "move", "uci": "x".repeat(8 * 1024)}))
        .await;
    ws.expect_error("too_large").await;
    assert_eq!(essence(&server.state(&id).await), before);

    server.play(&id, &white, "e2e4").await;
    ws.next_state().await;
    ws.send(json!({"type": "move", "uci": "e7e4"})).await;
    ws.expect_error("illegal_move").await;
    // Still usable: a good move goes through.
    ws.send(json!({"type": "move", "uci": "e7e5"})).await;
    let state = ws.next_state().await;
    assert_eq!(moves(&state), ["e2e4", "e7e5"]);

    // A spectator cannot act.
    let mut spectator = WsClient::connect(&server, &id, None).await;
    spectator.next_state().await;
    for message in [
        json!({"type": "move", "uci": "d2d4"}),
        json!({"type": "resign"}),
        json!({"type": "draw"}),
    ] {
        spectator.send(message).await;
        spectator.expect_error("forbidden").await;
    }
    // `?token=` with no value is no token: a spectator too.
    let mut empty_token = WsClient::connect(&server, &id, Some("")).await;
    empty_token.next_state().await;
    empty_token.send(json!({"type": "resign"})).await;
    empty_token.expect_error("forbidden").await;
    // A plain GET (no upgrade) answers in our error shape.
    assert_error(
        &server.get(&format!("/ws/games/{id}")).await,
        400,
        "bad_request",
    );
    assert_error(
        &server
            .get("/ws/games/6c1f3e7a-1111-4222-8333-944455556666")
            .await,
        404,
        "not_found",
    );
    // After the end: game_over.
    ws.send(json!({"type": "resign"})).await;
    let over = ws
        .state_where("the resignation", |s| s["status"] == "finished")
        .await;
    assert_eq!(over["result"], "1-0");
    ws.send(json!({"type": "draw"})).await;
    ws.expect_error("game_over").await;

    // Bad tokens are refused before the upgrade, in our error shape.
    let refused = |token: &str| {
        let url = server.ws_url(&format!("/ws/games/{id}?token={token}"));
        async move {
            match tokio_tungstenite::connect_async(url).await {
                Err(tokio_tungstenite::tungstenite::Error::Http(response)) => {
                    let status = response.status().as_u16();
                    let body: Value =
                        serde_json::from_slice(response.body().as_deref().unwrap_or_default())
                            .unwrap();
                    (status, body)
                }
                other => panic!("expected an HTTP refusal, got {other:?}"),
            }
        }
    };
    assert_error(&refused("nope").await, 401, "unauthorized");
    let (_, other_white, _) = server.human_game(json!({})).await;
    assert_error(&refused(&other_white).await, 403, "forbidden");
    let unknown = server.ws_url("/ws/games/6c1f3e7a-1111-4222-8333-944455556666");
    match tokio_tungstenite::connect_async(unknown).await {
        Err(tokio_tungstenite::tungstenite::Error::Http(response)) => {
            assert_eq!(response.status().as_u16(), 404)
        }
        other => panic!("expected 404, got {other:?}"),
    }

    // Over the hard cap (64 KiB) the connection is closed with 1009.
    let mut big = WsClient::connect(&server, &id, Some(&black)).await;
    big.next_state().await;
    big.send(json!({"type": "move", "uci": "x".repeat(70 * 1024)}))
        .await;
    let close = within(WAIT, "the close frame", async {
        loop {
            match big.socket.next().await {
                Some(Ok(Message::Close(frame))) => return frame,
                Some(Ok(_)) => continue,
                other => panic!("expected a close frame, got {other:?}"),
            }
        }
    })
    .await
    .expect("a close frame with a code");
    assert_eq!(u16::from(close.code), 1009, "{close:?}");
    server.stop().await;
}

#[tokio::test]
async fn floods_are_rate_limited_per_client() {
    let db = TestDb::new();
    let mut config = test_config(&db);
    config.http.rate_burst = 5;
    config.http.rate_limit = 0.01;
    let server = TestServer::start(config).await;
    // The limit is per client address (issue 8), and /healthz (the start-up
    // probe) is outside it: a fresh client has the whole burst.
    let flood = reqwest::Client::new();
    let mut statuses = Vec::new();
    for _ in 0..8 {
        let response = flood.get(server.url("/api/levels")).send().await.unwrap();
        statuses.push(read(response).await);
    }
    assert!(statuses[..5].iter().all(|(status, _)| *status == 200));
    assert_error(&statuses[5], 429, "rate_limited");
    assert_error(&statuses[7], 429, "rate_limited");
    let response = flood.get(server.url("/api/levels")).send().await.unwrap();
    assert_eq!(response.status().as_u16(), 429);
    assert!(
        response.headers().contains_key("retry-after"),
        "a 429 says when to come back"
    );
    // Another connection from the same address shares the bucket.
    let other = reqwest::Client::new();
    let response = other.get(server.url("/api/levels")).send().await.unwrap();
    assert_eq!(response.status().as_u16(), 429);
    server.stop().await;
}

#[tokio::test]
async fn websocket_floods_are_rate_limited() {
    let db = TestDb::new();
    let mut config = test_config(&db);
    config.ws.ws_rate_burst = 5;
    config.ws.ws_rate_limit = 0.01;
    let server = TestServer::start(config).await;
    // WebSocket messages have their own bucket.
    let (created, token) = server
        .create_game(
            json!({"white": {"kind": "human"}, "black": {"kind": "human"}}),
            None,
        )
        .await;
    let id = created["id"].as_str().unwrap().to_string();
    let token = token.unwrap();
    let mut ws = WsClient::connect(&server, &id, Some(&token)).await;
    ws.next_state().await;
    for _ in 0..5 {
        ws.send(json!({"type": "draw"})).await;
    }
    // The five allowed draw offers: waiting for an opponent, so refused.
    for _ in 0..5 {
        ws.expect_error("not_your_turn").await;
    }
    ws.send(json!({"type": "draw"})).await;
    ws.expect_error("rate_limited").await;
    server.stop().await;
}

/// With the default limits, a scripted client playing at full speed over one
/// keep-alive connection (a bot, a test suite) is not mistaken for a flood.
#[tokio::test]
async fn a_fast_scripted_game_is_not_a_flood() {
    let db = TestDb::new();
    let mut config = test_config(&db);
    let defaults = rookery_server::Config::defaults();
    config.http.rate_limit = defaults.http.rate_limit;
    config.http.rate_burst = defaults.http.rate_burst;
    let server = TestServer::start(config).await;
    let (id, white, black) = server.human_game(json!({})).await;
    let line = [
        "e2e4", "e7e5", "g1f3", "b8c6", "f1b5", "a7a6", "b5a4", "g8f6", "e1g1", "f8e7", "f1e1",
        "b7b5", "a4b3", "d7d6", "c2c3", "e8g8", "h2h3", "c6a5", "b3c2", "c7c5",
    ];
    let mut requests = 2;
    for (ply, uci) in line.iter().enumerate() {
        let token = if ply % 2 == 0 { &white } else { &black };
        server.play(&id, token, uci).await;
        assert_eq!(
            server.state(&id).await["moves"].as_array().unwrap().len(),
            ply + 1
        );
        requests += 2;
    }
    while requests < 150 {
        let (status, answer) = server.get(&format!("/api/games/{id}")).await;
        assert_eq!(status, 200, "request {requests}: {answer}");
        requests += 1;
    }
    server.stop().await;
}

/// A client that sends headers and body in separate writes, to an action
/// that needs no body, keeps its keep-alive connection: the server reads the
/// body before answering, instead of answering early and then dropping the
/// connection under the client's next request.
#[tokio::test]
async fn a_late_body_keeps_the_connection_alive() {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    let db = TestDb::new();
    let server = TestServer::start(test_config(&db)).await;
    let (id, white, _) = server.human_game(json!({})).await;
    let mut socket = tokio::net::TcpStream::connect(server.addr).await.unwrap();
    let head = format!(
        "POST /api/games/{id}/draw HTTP/1.1\r\nHost: rookery\r\n\
         Authorization: Bearer {white}\r\nContent-Type: application/json\r\n\
         Content-Length: 2\r\n\r\n"
    );
    socket.write_all(head.as_bytes()).await.unwrap();
    // The body comes a moment after the headers (as from clients that write
    // them separately), then the next request on the same connection.
    tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    socket.write_all(b"{}").await.unwrap();
    socket
        .write_all(b"GET /healthz HTTP/1.1\r\nHost: rookery\r\n\r\n")
        .await
        .unwrap();
    let mut received = Vec::new();
    within(WAIT, "two answers on one connection", async {
        let mut buffer = [0u8; 4096];
        loop {
            let text = String::from_utf8_lossy(&received);
            if text.matches("HTTP/1.1 ").count() >= 2 && text.ends_with("ok") {
                return;
            }
            match socket.read(&mut buffer).await {
                Ok(0) | Err(_) => return,
                Ok(n) => received.extend_from_slice(&buffer[..n]),
            }
        }
    })
    .await;
    let text = String::from_utf8_lossy(&received);
    assert!(text.starts_with("HTTP/1.1 200"), "{text}");
    assert_eq!(
        text.matches("HTTP/1.1 200").count(),
        2,
        "the connection must serve the next request: {text}"
    );
    assert_eq!(server.state(&id).await["draw_offer"], "white");
    server.stop().await;
}

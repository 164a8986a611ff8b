//! Challenges by name and the event stream (issue 21, in lichess's shapes
//! for issue 24): a challenge is told live on the other person's stream,
//! declined with a reason, cancelled, or accepted into a game where both
//! players act through their accounts; refusals answer lichess's flat
//! error shape.

mod support;

use std::time::Duration;

use serde_json::{json, Value};
use support::*;

/// An open event stream, read line by line.
struct EventStream {
    response: reqwest::Response,
    buffer: String,
}

impl EventStream {
    async fn open(server: &TestServer, token: &str) -> EventStream {
        let response = server
            .http
            .get(server.url("/api/stream/event"))
            .bearer_auth(token)
            .send()
            .await
            .expect("stream");
        assert_eq!(response.status().as_u16(), 200);
        assert_eq!(response.headers()["content-type"], "application/x-ndjson");
        EventStream {
            response,
            buffer: String::new(),
        }
    }

    /// The next line, keep-alive newlines included (as `Value::Null`).
    async fn next_line(&mut self) -> Value {
        within(Duration::from_secs(15), "an event line", async {
            loop {
                if let Some(end) = self.buffer.find('\n') {
                    let line: String = self.buffer.drain(..=end).collect();
                    let line = line.trim();
                    return if line.is_empty() {
                        Value::Null
                    } else {
                        serde_json::from_str(line).expect("a JSON line")
                    };
                }
                let chunk = self
                    .response
                    .chunk()
                    .await
                    .expect("stream chunk")
                    .expect("the stream goes on");
                self.buffer
                    .push_str(std::str::from_utf8(&chunk).expect("utf-8"));
            }
        })
        .await
    }

    /// The next event (keep-alives skipped).
    async fn next(&mut self) -> Value {
        loop {
            let line = self.next_line().await;
            if !line.is_null() {
                return line;
            }
        }
    }
}

fn lichess_error(answer: &(u16, Value), status: u16) {
    assert_eq!(answer.0, status, "{}", answer.1);
    assert!(
        answer.1["error"].as_str().is_some_and(|m| !m.is_empty()),
        "lichess's flat error: {}",
        answer.1
    );
}

#[tokio::test]
async fn a_challenge_by_name_is_told_answered_and_played() {
    let db = TestDb::new();
    let server = TestServer::start(test_config(&db)).await;
    let alice = person(&server, "alice", &["play", "challenge"]).await;
    let bob = person(&server, "Bob", &["play", "challenge"]).await;
    let mut alice_events = EventStream::open(&server, &alice).await;
    let mut bob_events = EventStream::open(&server, &bob).await;

    // Alice challenges Bob by name: both hear it.
    let (status, challenge) = form(
        &server,
        "/api/challenge/bob",
        &alice,
        "clock.limit=300&clock.increment=2&color=white&rated=true",
    )
    .await;
    assert_eq!(status, 200, "{challenge}");
    let id = challenge["id"].as_str().unwrap().to_string();
    assert_eq!(challenge["status"], "created");
    assert_eq!(challenge["challenger"]["name"], "alice");
    assert_eq!(challenge["destUser"]["id"], "bob");
    assert_eq!(challenge["timeControl"]["show"], "5+2");
    assert_eq!(challenge["speed"], "blitz");
    assert_eq!(challenge["rated"], true);
    assert_eq!(challenge["finalColor"], "white");
    assert_eq!(challenge["direction"], "out");
    let told = bob_events.next().await;
    assert_eq!(told["type"], "challenge");
    assert_eq!(told["challenge"]["id"], id.as_str());
    assert_eq!(told["challenge"]["direction"], "in");
    assert_eq!(alice_events.next().await["type"], "challenge");
    let (_, listed) = read(
        server
            .http
            .get(server.url("/api/challenge"))
            .bearer_auth(&bob)
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(listed["in"][0]["id"], id.as_str());
    assert_eq!(listed["out"], json!([]));

    // A second one, declined with a reason: Alice hears why.
    let (_, second) = form(
        &server,
        "/api/challenge/bob",
        &alice,
        "clock.limit=60&clock.increment=0",
    )
    .await;
    let second_id = second["id"].as_str().unwrap().to_string();
    bob_events.next().await;
    alice_events.next().await;
    let (status, ok) = form(
        &server,
        &format!("/api/challenge/{second_id}/decline"),
        &bob,
        "reason=tooFast",
    )
    .await;
    assert_eq!((status, ok), (200, json!({"ok": true})));
    let declined = alice_events.next().await;
    assert_eq!(declined["type"], "challengeDeclined");
    assert_eq!(declined["challenge"]["declineReasonKey"], "tooFast");
    assert_eq!(bob_events.next().await["type"], "challengeDeclined");
    // Answered once only.
    lichess_error(
        &form(
            &server,
            &format!("/api/challenge/{second_id}/accept"),
            &bob,
            "",
        )
        .await,
        400,
    );

    // A third, cancelled by Alice.
    let (_, third) = form(&server, "/api/challenge/bob", &alice, "").await;
    let third_id = third["id"].as_str().unwrap().to_string();
    assert_eq!(third["timeControl"]["type"], "unlimited");
    bob_events.next().await;
    alice_events.next().await;
    let (status, _) = form(
        &server,
        &format!("/api/challenge/{third_id}/cancel"),
        &alice,
        "",
    )
    .await;
    assert_eq!(status, 200);
    assert_eq!(bob_events.next().await["type"], "challengeCanceled");
    alice_events.next().await;

    // Bob accepts the first: the game has the challenge's id, both start.
    let (status, ok) = form(&server, &format!("/api/challenge/{id}/accept"), &bob, "").await;
    assert_eq!((status, ok), (200, json!({"ok": true})));
    for (events, color) in [(&mut alice_events, "white"), (&mut bob_events, "black")] {
        let started = events.next().await;
        assert_eq!(started["type"], "gameStart", "{started}");
        assert_eq!(started["game"]["gameId"], id.as_str());
        assert_eq!(started["game"]["color"], color);
        assert_eq!(started["game"]["isMyTurn"], color == "white");
        assert_eq!(started["game"]["speed"], "blitz");
    }
    let game = server.state(&id).await;
    assert_eq!(game["status"], "active");
    assert_eq!(game["white"]["name"], "alice");
    assert_eq!(game["black"]["name"], "Bob");
    assert_eq!(game["rated"], true);
    assert_eq!(game["visibility"], "private");
    // Each plays through their account, with no seat token.
    server.play(&id, &alice, "e2e4").await;
    server.play(&id, &bob, "e7e5").await;
    lichess_error(
        &form(&server, &format!("/api/challenge/{id}/accept"), &bob, "").await,
        400,
    );
    // A new stream opens with the game going on.
    let mut again = EventStream::open(&server, &bob).await;
    let opening = again.next().await;
    assert_eq!(opening["type"], "gameStart");
    assert_eq!(opening["game"]["lastMove"], "e7e5");
    assert_eq!(opening["game"]["hasMoved"], true);

    // The end is told to both.
    let (status, _) = server
        .post(&format!("/api/games/{id}/resign"), Some(&alice), None)
        .await;
    assert_eq!(status, 200);
    for events in [&mut alice_events, &mut bob_events] {
        let finished = events.next().await;
        assert_eq!(finished["type"], "gameFinish", "{finished}");
        assert_eq!(finished["game"]["status"]["name"], "resign");
        assert_eq!(finished["game"]["winner"], "black");
    }
    // The second stream heard the end too; then, nothing happening, a bare
    // newline keeps it alive.
    assert_eq!(again.next().await["type"], "gameFinish");
    assert_eq!(again.next_line().await, Value::Null);
    server.stop().await;
}

#[tokio::test]
async fn challenges_refuse_in_lichess_shape() {
    let db = TestDb::new();
    let server = TestServer::start(test_config(&db)).await;
    let alice = person(&server, "alice", &["play", "challenge"]).await;
    let carol = person(&server, "carol", &["challenge"]).await;
    let player_only = person(&server, "dave", &["play"]).await;
    lichess_error(
        &form(&server, "/api/challenge/nobody", &alice, "").await,
        404,
    );
    lichess_error(
        &form(&server, "/api/challenge/alice", &alice, "").await,
        400,
    );
    lichess_error(
        &form(&server, "/api/challenge/carol", &player_only, "").await,
        403,
    );
    lichess_error(
        &form(
            &server,
            "/api/challenge/carol",
            &alice,
            "clock.limit=999999",
        )
        .await,
        400,
    );
    lichess_error(
        &form(&server, "/api/challenge/carol", &alice, "color=green").await,
        400,
    );
    lichess_error(
        &form(&server, "/api/challenge/carol", &alice, "variant=atomic").await,
        400,
    );
    lichess_error(
        &form(&server, "/api/challenge/carol", "rky_not_a_token", "").await,
        401,
    );
    // Only the one challenged accepts; strangers see nothing.
    let (_, challenge) = form(&server, "/api/challenge/carol", &alice, "").await;
    let id = challenge["id"].as_str().unwrap();
    lichess_error(
        &form(&server, &format!("/api/challenge/{id}/accept"), &alice, "").await,
        404,
    );
    lichess_error(
        &form(
            &server,
            &format!("/api/challenge/{id}/decline"),
            &player_only,
            "",
        )
        .await,
        403,
    );
    lichess_error(
        &form(&server, "/api/challenge/not-an-id/accept", &carol, "").await,
        404,
    );
    // JSON bodies are read too.
    let (status, json_made) = read(
        server
            .http
            .post(server.url("/api/challenge/carol"))
            .bearer_auth(&alice)
            .json(&json!({"clock.limit": 180, "clock.increment": 0, "rated": false}))
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(status, 200, "{json_made}");
    assert_eq!(json_made["timeControl"]["show"], "3+0");
    server.stop().await;
}

#[tokio::test]
async fn a_revoked_credential_ends_its_event_stream() {
    let db = TestDb::new();
    let server = TestServer::start(test_config(&db)).await;
    let token = person(&server, "erin", &["challenge"]).await;
    let mut events = EventStream::open(&server, &token).await;
    // Its owner logs in and revokes it.
    let response = server
        .http
        .post(server.url("/api/session"))
        .json(&json!({"name": "erin", "password": PASSWORD}))
        .send()
        .await
        .expect("log in");
    let cookie = response.headers()["set-cookie"]
        .to_str()
        .unwrap()
        .split(';')
        .next()
        .unwrap()
        .to_string();
    let (_, tokens) = read(
        server
            .http
            .get(server.url("/api/account/tokens"))
            .header("cookie", &cookie)
            .send()
            .await
            .unwrap(),
    )
    .await;
    let id = tokens["tokens"][0]["id"].as_str().unwrap().to_string();
    let revoked = server
        .http
        .delete(server.url(&format!("/api/account/tokens/{id}")))
        .header("cookie", &cookie)
        .send()
        .await
        .unwrap();
    assert_eq!(revoked.status().as_u16(), 204);
    // The stream ends at its next keep-alive, instead of sending one.
    within(Duration::from_secs(15), "the stream to end", async {
        while let Ok(Some(_)) = events.response.chunk().await {}
    })
    .await;
    server.stop().await;
}

/// What lichess-bot needs that berserk's board client does not show (found
/// by running lichess-bot against Rookery): no `secondsLeft: null` in
/// untimed games, draws offered and accepted through a move's
/// `offeringDraw`, a chat flood dropped rather than refused, a bot
/// challenger titled BOT.
#[tokio::test]
async fn what_lichess_bot_relies_on() {
    let db = TestDb::new();
    let server = TestServer::start(test_config(&db)).await;
    let bot = person(&server, "robo", &["bot", "challenge"]).await;
    let (status, _) = form(&server, "/api/bot/account/upgrade", &bot, "").await;
    assert_eq!(status, 200);
    let human = person(&server, "hugo", &["play", "challenge"]).await;
    let mut human_events = EventStream::open(&server, &human).await;

    // The bot challenges the person: titled BOT; untimed (days).
    let (status, made) = form(&server, "/api/challenge/hugo", &bot, "days=3&color=white").await;
    assert_eq!(status, 200, "{made}");
    assert_eq!(made["challenger"]["title"], "BOT");
    assert_eq!(made["timeControl"]["type"], "unlimited");
    human_events.next().await;
    let id = made["id"].as_str().unwrap().to_string();
    assert_eq!(
        form(&server, &format!("/api/challenge/{id}/accept"), &human, "")
            .await
            .0,
        200
    );
    let started = human_events.next().await;
    assert_eq!(started["type"], "gameStart");
    assert!(
        started["game"].get("secondsLeft").is_none(),
        "no secondsLeft without a clock: {started}"
    );

    // The bot moves and offers a draw with the move.
    let bot_move = |uci: &str, offering: bool| {
        let url = format!(
            "/api/bot/game/{id}/move/{uci}?offeringDraw={}",
            if offering { "true" } else { "false" }
        );
        let bot = bot.clone();
        let server = &server;
        async move { form(server, &url, &bot, "").await }
    };
    assert_eq!(bot_move("e2e4", true).await.0, 200);
    let state = server.state(&id).await;
    assert_eq!(moves(&state), ["e2e4"]);
    assert_eq!(state["draw_offer"], "white");
    // The person declines by moving; then offers a draw; the bot accepts
    // with offeringDraw (its move is not played: the game is drawn).
    assert_eq!(
        form(
            &server,
            &format!("/api/board/game/{id}/move/e7e5"),
            &human,
            ""
        )
        .await
        .0,
        200
    );
    assert_eq!(bot_move("g1f3", false).await.0, 200);
    assert_eq!(
        form(
            &server,
            &format!("/api/board/game/{id}/draw/yes"),
            &human,
            ""
        )
        .await
        .0,
        200
    );
    assert_eq!(bot_move("f1c4", true).await.0, 200);
    let drawn = server.state(&id).await;
    assert_eq!(drawn["termination"], "agreement");
    assert_eq!(moves(&drawn).len(), 3, "the accepting move is not played");

    // A chat flood is dropped, not refused: 200 each time, 10 stored.
    for n in 0..14 {
        let (status, ok) = form(
            &server,
            &format!("/api/bot/game/{id}/chat"),
            &bot,
            &format!("room=player&text=line+{n}"),
        )
        .await;
        assert_eq!((status, ok), (200, json!({"ok": true})));
    }
    let (_, chat) = read(
        server
            .http
            .get(server.url(&format!("/api/board/game/{id}/chat")))
            .bearer_auth(&human)
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(chat.as_array().unwrap().len(), 10, "{chat}");
    // The spectators' room has its own count.
    let (status, _) = form(
        &server,
        &format!("/api/bot/game/{id}/chat"),
        &bot,
        "room=spectator&text=hello+watchers",
    )
    .await;
    assert_eq!(status, 200);
    server.stop().await;
}

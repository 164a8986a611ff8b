//! A community that keeps itself clean (issue 37), from outside: follows
//! and blocks in lichess's shapes, who may challenge whom, chat pushed over
//! the game's WebSocket and the board stream (rooms, blocks, the word
//! filter, invisible characters, floods), reports and the moderators'
//! actions with their audit log (the role granted by the real binary's
//! `admin grant`), and leaving: an account closed, its data exported.

mod support;

use std::time::Duration;

use serde_json::{json, Value};
use support::*;
use tokio_tungstenite::tungstenite::client::IntoClientRequest;

/// An account with a `play challenge` token.
type Person = Account;

async fn sign_up(server: &TestServer, name: &str) -> Person {
    account(server, name, &["play", "challenge"]).await
}

/// A request as `person`'s session (`json`: a JSON body).
async fn by_cookie(
    server: &TestServer,
    method: reqwest::Method,
    path: &str,
    person: &Person,
    body: Option<Value>,
) -> (u16, Value) {
    let mut request = server
        .http
        .request(method, server.url(path))
        .header("cookie", &person.cookie);
    if let Some(body) = body {
        request = request.json(&body);
    }
    read(request.send().await.expect("request")).await
}

/// A request with `token` as Bearer.
async fn by_token(
    server: &TestServer,
    method: reqwest::Method,
    path: &str,
    token: &str,
    body: Option<Value>,
) -> (u16, Value) {
    let mut request = server
        .http
        .request(method, server.url(path))
        .bearer_auth(token);
    if let Some(body) = body {
        request = request.json(&body);
    }
    read(request.send().await.expect("request")).await
}

async fn post(server: &TestServer, path: &str, person: &Person) -> (u16, Value) {
    by_token(server, reqwest::Method::POST, path, &person.token, None).await
}

fn lichess_error(answer: &(u16, Value), status: u16, words: &str) {
    assert_eq!(answer.0, status, "{}", answer.1);
    let message = answer.1["error"].as_str().unwrap_or_default();
    assert!(message.contains(words), "{words:?} in {}", answer.1);
}

/// NDJSON lines of a finished body.
async fn ndjson(server: &TestServer, path: &str, person: &Person) -> Vec<Value> {
    let response = server
        .http
        .get(server.url(path))
        .bearer_auth(&person.token)
        .send()
        .await
        .expect("GET");
    assert_eq!(response.status().as_u16(), 200);
    assert_eq!(response.headers()["content-type"], "application/x-ndjson");
    let text = response.text().await.expect("body");
    text.lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).expect("JSON line"))
        .collect()
}

/// `from` challenges `to` (`terms`: form fields) and `to` accepts: the
/// game's id.
async fn challenge_game(server: &TestServer, from: &Person, to: &Person, terms: &str) -> String {
    let (status, challenge) = read(
        server
            .http
            .post(server.url(&format!("/api/challenge/{}", to.name)))
            .bearer_auth(&from.token)
            .header("content-type", "application/x-www-form-urlencoded")
            .body(terms.to_string())
            .send()
            .await
            .expect("challenge"),
    )
    .await;
    assert_eq!(status, 200, "{challenge}");
    let id = challenge["id"].as_str().expect("id").to_string();
    let accepted = post(server, &format!("/api/challenge/{id}/accept"), to).await;
    assert_eq!(accepted, (200, json!({"ok": true})));
    id
}

/// The game's WebSocket, as `person`'s session (or anonymous).
async fn socket(server: &TestServer, id: &str, person: Option<&Person>) -> WsClient {
    let mut request = server
        .ws_url(&format!("/ws/games/{id}"))
        .into_client_request()
        .expect("request");
    if let Some(person) = person {
        request
            .headers_mut()
            .insert("cookie", person.cookie.parse().expect("header"));
    }
    let (socket, _) = within(
        WAIT,
        "WebSocket connect",
        tokio_tungstenite::connect_async(request),
    )
    .await
    .expect("connect");
    WsClient { socket }
}

/// The next message of `kind` (others skipped).
async fn next_of(ws: &mut WsClient, kind: &str) -> Value {
    loop {
        let message = ws.next().await;
        if message["type"] == kind {
            return message;
        }
        assert_ne!(message["type"], "error", "{message}");
    }
}

/// Skips states (a spectator arriving sends one) until an error, which
/// must have `code`.
async fn refused(ws: &mut WsClient, code: &str) {
    loop {
        let message = ws.next().await;
        if message["type"] == "error" {
            assert_eq!(message["code"], code, "{message}");
            return;
        }
        assert_eq!(message["type"], "state", "{message}");
    }
}

/// An open NDJSON stream (event stream, board stream), read line by line.
struct Lines {
    response: reqwest::Response,
    buffer: String,
}

impl Lines {
    async fn open(server: &TestServer, path: &str, token: &str) -> Lines {
        let response = server
            .http
            .get(server.url(path))
            .bearer_auth(token)
            .send()
            .await
            .expect("stream");
        assert_eq!(response.status().as_u16(), 200, "{path}");
        Lines {
            response,
            buffer: String::new(),
        }
    }

    /// The next line whose `type` is `kind`.
    async fn next_of(&mut self, kind: &str) -> Value {
        within(Duration::from_secs(15), kind, async {
            loop {
                while let Some(end) = self.buffer.find('\n') {
                    let line: String = self.buffer.drain(..=end).collect();
                    if line.trim().is_empty() {
                        continue;
                    }
                    let value: Value = serde_json::from_str(line.trim()).expect("JSON line");
                    if value["type"] == kind {
                        return value;
                    }
                }
                let chunk = self.response.chunk().await.expect("chunk").expect("more");
                self.buffer
                    .push_str(std::str::from_utf8(&chunk).expect("utf-8"));
            }
        })
        .await
    }
}

#[tokio::test]
async fn follows_blocks_and_who_may_challenge() {
    let db = TestDb::new();
    let server = TestServer::start(test_config(&db)).await;
    let alice = sign_up(&server, "alice").await;
    let bob = sign_up(&server, "Bob").await;
    let carol = sign_up(&server, "carol").await;

    // Following, in lichess's shapes; Bob's game shows in Alice's list.
    assert_eq!(
        post(&server, "/api/rel/follow/bob", &alice).await,
        (200, json!({"ok": true}))
    );
    lichess_error(
        &post(&server, "/api/rel/follow/nobody", &alice).await,
        404,
        "no such user",
    );
    lichess_error(
        &post(&server, "/api/rel/follow/alice", &alice).await,
        400,
        "you",
    );
    let game = challenge_game(&server, &bob, &carol, "clock.limit=300&clock.increment=0").await;
    let following = ndjson(&server, "/api/rel/following", &alice).await;
    assert_eq!(following.len(), 1, "{following:?}");
    assert_eq!(following[0]["id"], "bob");
    assert_eq!(following[0]["username"], "Bob");
    assert_eq!(following[0]["online"], false);
    assert!(following[0]["playing"]
        .as_str()
        .is_some_and(|url| url.ends_with(&format!("/games/{game}"))));

    // Who may challenge Bob: only the people he follows. An API token
    // cannot change the setting; a bad value changes nothing.
    let settings = "/api/account/social";
    let (status, _) = by_token(
        &server,
        reqwest::Method::PUT,
        settings,
        &bob.token,
        Some(json!({"challenge_policy": "nobody"})),
    )
    .await;
    assert_eq!(status, 403);
    let bad = by_cookie(
        &server,
        reqwest::Method::PUT,
        settings,
        &bob,
        Some(json!({"challenge_policy": "friends"})),
    )
    .await;
    assert_error(&bad, 400, "bad_request");
    let (status, view) = by_cookie(
        &server,
        reqwest::Method::PUT,
        settings,
        &bob,
        Some(json!({"challenge_policy": "following"})),
    )
    .await;
    assert_eq!(status, 200, "{view}");
    assert_eq!(view["challenge_policy"], "following");
    lichess_error(
        &post(&server, "/api/challenge/bob", &alice).await,
        400,
        "Bob only accepts challenges from friends.",
    );
    assert_eq!(post(&server, "/api/rel/follow/alice", &bob).await.0, 200);
    let (status, challenge) = post(&server, "/api/challenge/bob", &alice).await;
    assert_eq!(status, 200, "{challenge}");
    let (status, _) = by_cookie(
        &server,
        reqwest::Method::PUT,
        settings,
        &bob,
        Some(json!({"challenge_policy": "nobody"})),
    )
    .await;
    assert_eq!(status, 200);
    lichess_error(
        &post(&server, "/api/challenge/bob", &alice).await,
        400,
        "Bob does not accept challenges.",
    );
    by_cookie(
        &server,
        reqwest::Method::PUT,
        settings,
        &bob,
        Some(json!({"challenge_policy": "everyone"})),
    )
    .await;

    // Carol blocks Bob: neither may challenge the other; blocking ends
    // nothing of Alice's follow of Bob.
    assert_eq!(post(&server, "/api/rel/block/bob", &carol).await.0, 200);
    lichess_error(
        &post(&server, "/api/challenge/carol", &bob).await,
        400,
        "You cannot challenge carol.",
    );
    lichess_error(
        &post(&server, "/api/challenge/bob", &carol).await,
        400,
        "You cannot challenge Bob.",
    );
    let blocking = ndjson(&server, "/api/rel/blocking", &carol).await;
    assert_eq!(blocking.len(), 1);
    assert_eq!(blocking[0]["id"], "bob");
    let (_, carol_view) = by_cookie(&server, reqwest::Method::GET, settings, &carol, None).await;
    assert_eq!(carol_view["blocking"], json!(["Bob"]));
    assert_eq!(carol_view["following"], json!([]));
    let (_, bob_view) = by_cookie(&server, reqwest::Method::GET, settings, &bob, None).await;
    assert_eq!(bob_view["following"], json!(["alice"]));

    // Following someone one blocks replaces the block (one relation a
    // pair, as on lichess); unblocking lets challenges through again.
    assert_eq!(post(&server, "/api/rel/unblock/bob", &carol).await.0, 200);
    let (status, challenge) = post(&server, "/api/challenge/carol", &bob).await;
    assert_eq!(status, 200, "{challenge}");
    assert_eq!(post(&server, "/api/rel/block/alice", &bob).await.0, 200);
    let (_, bob_view) = by_cookie(&server, reqwest::Method::GET, settings, &bob, None).await;
    assert_eq!(bob_view["following"], json!([]));
    assert_eq!(bob_view["blocking"], json!(["alice"]));
    assert_eq!(post(&server, "/api/rel/unfollow/bob", &alice).await.0, 200);
    assert!(ndjson(&server, "/api/rel/following", &alice)
        .await
        .is_empty());
    server.stop().await;
}

#[tokio::test]
async fn chat_rides_the_game_socket_in_two_rooms() {
    let db = TestDb::new();
    let mut config = test_config(&db);
    let words = db.dir.path().join("words.txt");
    std::fs::write(&words, "# the operator's list\nbadword\n").expect("filter file");
    config.ops.chat_filter = Some(words);
    let server = TestServer::start(config).await;
    let alice = sign_up(&server, "alice").await;
    let bob = sign_up(&server, "bob").await;
    let carol = sign_up(&server, "carol").await;
    let dave = sign_up(&server, "dave").await;
    let id = challenge_game(&server, &alice, &bob, "").await;

    // Players read the players' room, spectators the spectators'.
    let mut alice_ws = socket(&server, &id, Some(&alice)).await;
    let mut bob_ws = socket(&server, &id, Some(&bob)).await;
    let mut carol_ws = socket(&server, &id, Some(&carol)).await;
    let mut watcher = socket(&server, &id, None).await;
    // An empty room sends no history: a client that never chats sees the
    // messages it always did (the first state, then changes).
    for ws in [&mut alice_ws, &mut bob_ws, &mut carol_ws, &mut watcher] {
        ws.next_state().await;
    }

    // A line without its invisible characters, filtered, reaches both
    // players at once, and the board stream; spectators do not read it.
    alice_ws
        .send(json!({"type": "chat", "text": "hello \u{202E}bob\u{200B} BadWord"}))
        .await;
    let expected =
        json!({"type": "chat", "room": "player", "user": "alice", "text": "hello bob *******"});
    assert_eq!(next_of(&mut bob_ws, "chat").await, expected);
    assert_eq!(next_of(&mut alice_ws, "chat").await, expected);
    let (status, lines) = by_token(
        &server,
        reqwest::Method::GET,
        &format!("/api/board/game/{id}/chat"),
        &bob.token,
        None,
    )
    .await;
    assert_eq!(status, 200);
    assert_eq!(
        lines,
        json!([{"user": "alice", "text": "hello bob *******"}])
    );

    // An anonymous spectator reads but cannot write.
    watcher.send(json!({"type": "chat", "text": "hi"})).await;
    refused(&mut watcher, "forbidden").await;

    // Bob blocks carol, then opens his board stream: her spectator line
    // does not reach him, dave's does (one channel: order is kept).
    assert_eq!(post(&server, "/api/rel/block/carol", &bob).await.0, 200);
    let mut stream =
        Lines::open(&server, &format!("/api/board/game/stream/{id}"), &bob.token).await;
    stream.next_of("gameFull").await;
    carol_ws
        .send(json!({"type": "chat", "text": "from carol"}))
        .await;
    let seen = next_of(&mut watcher, "chat").await;
    assert_eq!(seen["user"], "carol");
    assert_eq!(seen["room"], "spectator");
    let mut dave_ws = socket(&server, &id, Some(&dave)).await;
    let history = next_of(&mut dave_ws, "chat_history").await;
    assert_eq!(history["lines"][0]["user"], "carol");
    dave_ws
        .send(json!({"type": "chat", "text": "from dave"}))
        .await;
    assert_eq!(next_of(&mut dave_ws, "chat").await["text"], "from dave");
    let line = stream.next_of("chatLine").await;
    assert_eq!(
        line,
        json!({"type": "chatLine", "room": "spectator", "username": "dave", "text": "from dave"})
    );
    assert_eq!(next_of(&mut watcher, "chat").await["user"], "dave");
    // A newcomer to the spectators' room gets its lines so far.
    let mut late = socket(&server, &id, None).await;
    let history = next_of(&mut late, "chat_history").await;
    assert_eq!(
        history["lines"],
        json!([{"user": "carol", "text": "from carol"}, {"user": "dave", "text": "from dave"}])
    );

    // Blocked by the player facing her, alice cannot post in their room,
    // over the socket or lichess's route; empty lines are refused.
    assert_eq!(post(&server, "/api/rel/block/alice", &bob).await.0, 200);
    alice_ws
        .send(json!({"type": "chat", "text": "still there?"}))
        .await;
    refused(&mut alice_ws, "forbidden").await;
    let answer = read(
        server
            .http
            .post(server.url(&format!("/api/board/game/{id}/chat")))
            .bearer_auth(&alice.token)
            .form(&[("room", "player"), ("text", "let me talk")])
            .send()
            .await
            .expect("POST"),
    )
    .await;
    assert_eq!(answer.0, 403, "{}", answer.1);
    bob_ws
        .send(json!({"type": "chat", "text": " \u{200B} "}))
        .await;
    refused(&mut bob_ws, "bad_request").await;

    // The flood gate: ten lines a minute in a room (dave wrote one
    // already), then an error on the socket (lichess's route drops them
    // with 200).
    for n in 0..9 {
        dave_ws
            .send(json!({"type": "chat", "text": format!("line {n}")}))
            .await;
        assert_eq!(
            next_of(&mut dave_ws, "chat").await["text"],
            format!("line {n}")
        );
    }
    dave_ws
        .send(json!({"type": "chat", "text": "one too many"}))
        .await;
    refused(&mut dave_ws, "rate_limited").await;
    drop(stream);
    server.stop().await;
}

/// Runs the real binary's `admin` subcommand on `db`: (exit code, stdout).
async fn admin(db: &TestDb, args: &[&str]) -> (Option<i32>, String) {
    let url = db.url();
    let mut full = vec!["admin"];
    full.extend_from_slice(args);
    full.extend_from_slice(&["--database", &url]);
    let output = within(WAIT, "rookery-server admin", server_binary(&full).output())
        .await
        .expect("run admin");
    (
        output.status.code(),
        String::from_utf8_lossy(&output.stdout).trim().to_string(),
    )
}

#[tokio::test]
async fn reports_moderators_and_the_audit_log() {
    let db = TestDb::new();
    let server = TestServer::start(test_config(&db)).await;
    let boss = sign_up(&server, "Boss").await;
    let alice = sign_up(&server, "alice").await;
    let cheat = sign_up(&server, "cheat").await;
    let troll = sign_up(&server, "troll").await;
    let get = reqwest::Method::GET;

    // Reports: anyone files one; bad ones change nothing.
    let report = |body: Value| {
        let server = &server;
        let token = alice.token.clone();
        async move {
            by_token(
                server,
                reqwest::Method::POST,
                "/api/reports",
                &token,
                Some(body),
            )
            .await
        }
    };
    let game = challenge_game(
        &server,
        &alice,
        &cheat,
        "rated=true&clock.limit=600&clock.increment=0",
    )
    .await;
    let (status, cheat_report) = report(
        json!({"username": "cheat", "reason": "cheat", "text": "engine moves", "game": game}),
    )
    .await;
    assert_eq!(status, 201, "{cheat_report}");
    assert_eq!(cheat_report["suspect"], "cheat");
    assert_eq!(cheat_report["reporter"], "alice");
    assert_eq!(cheat_report["game_id"], game.as_str());
    assert_error(
        &report(json!({"username": "cheat", "reason": "rude", "text": "x"})).await,
        400,
        "bad_request",
    );
    assert_error(
        &report(json!({"username": "alice", "reason": "other", "text": "me"})).await,
        400,
        "bad_request",
    );
    assert_error(
        &report(json!({"username": "ghost", "reason": "other", "text": "x"})).await,
        404,
        "not_found",
    );
    assert_error(
        &report(json!({"username": "cheat", "reason": "other", "text": " \u{200B}"})).await,
        400,
        "bad_request",
    );
    assert_error(
        &report(json!({"username": "cheat", "reason": "other", "text": "x", "game": "nope"})).await,
        400,
        "bad_request",
    );
    let (status, troll_report) =
        report(json!({"username": "troll", "reason": "abuse", "text": "insults in chat"})).await;
    assert_eq!(status, 201);

    // No moderator yet: the queue is closed to all.
    assert_error(
        &by_cookie(&server, get.clone(), "/api/mod/reports", &boss, None).await,
        403,
        "forbidden",
    );
    // An unknown name: the command fails (1, not clap's usage error 2).
    let (code, said) = admin(&db, &["grant", "ghost", "moderator"]).await;
    assert_eq!(code, Some(1), "{said}");
    let (code, said) = admin(&db, &["grant", "boss", "moderator"]).await;
    assert_eq!((code, said.as_str()), (Some(0), "Boss is now a moderator"));
    // A moderator's API token is not enough: moderation takes a session.
    assert_error(
        &by_token(&server, get.clone(), "/api/mod/reports", &boss.token, None).await,
        403,
        "forbidden",
    );
    let (status, queue) = by_cookie(&server, get.clone(), "/api/mod/reports", &boss, None).await;
    assert_eq!(status, 200);
    let ids: Vec<&Value> = queue["reports"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| &r["id"])
        .collect();
    assert_eq!(ids, [&cheat_report["id"], &troll_report["id"]]);
    assert_error(
        &by_cookie(&server, get.clone(), "/api/mod/reports", &alice, None).await,
        403,
        "forbidden",
    );

    let act = |body: Value| {
        let server = &server;
        let boss = &boss;
        async move {
            by_cookie(
                server,
                reqwest::Method::POST,
                "/api/mod/actions",
                boss,
                Some(body),
            )
            .await
        }
    };
    assert_error(
        &act(json!({"action": "ban", "username": "troll"})).await,
        400,
        "bad_request",
    );
    assert_error(
        &act(json!({"action": "dismiss", "username": "troll"})).await,
        400,
        "bad_request",
    );
    assert_error(
        &act(json!({"action": "timeout", "username": "troll", "minutes": 0})).await,
        400,
        "bad_request",
    );
    assert_error(&act(json!({"action": "warn", "username": "cheat", "report": troll_report["id"], "text": "x"})).await, 400, "bad_request");

    // Warn: the person is told on their event stream and on their next
    // page load, until they dismiss it; the report leaves the queue.
    let mut troll_events = Lines::open(&server, "/api/stream/event", &troll.token).await;
    let (status, warned) =
        act(json!({"action": "warn", "report": troll_report["id"], "text": "Be civil in chat."}))
            .await;
    assert_eq!(status, 201, "{warned}");
    assert_eq!(warned["target"], "troll");
    let told = troll_events.next_of("notice").await;
    assert_eq!(told["notice"]["text"], "Be civil in chat.");
    let (_, notices) = by_token(
        &server,
        get.clone(),
        "/api/account/notices",
        &troll.token,
        None,
    )
    .await;
    let notice = notices["notices"][0].clone();
    assert_eq!(notice["text"], "Be civil in chat.");
    let path = format!("/api/account/notices/{}", notice["id"].as_str().unwrap());
    assert_eq!(
        by_token(&server, reqwest::Method::DELETE, &path, &troll.token, None)
            .await
            .0,
        204
    );
    let (_, notices) = by_token(
        &server,
        get.clone(),
        "/api/account/notices",
        &troll.token,
        None,
    )
    .await;
    assert_eq!(notices["notices"], json!([]));
    assert_error(
        &act(json!({"action": "dismiss", "report": troll_report["id"]})).await,
        400,
        "bad_request",
    );

    // Timeout: out of every chat, whatever the game.
    let troll_game = challenge_game(&server, &troll, &alice, "").await;
    let chat = format!("/api/board/game/{troll_game}/chat");
    let line = |text: &'static str| {
        let server = &server;
        let (chat, token) = (chat.clone(), troll.token.clone());
        async move {
            read(
                server
                    .http
                    .post(server.url(&chat))
                    .bearer_auth(token)
                    .form(&[("text", text)])
                    .send()
                    .await
                    .unwrap(),
            )
            .await
        }
    };
    assert_eq!(line("before").await.0, 200);
    assert_eq!(
        act(json!({"action": "timeout", "username": "troll", "minutes": 30}))
            .await
            .0,
        201
    );
    assert_eq!(line("after").await.0, 403);
    let mut troll_ws = socket(&server, &troll_game, Some(&troll)).await;
    let history = next_of(&mut troll_ws, "chat_history").await;
    assert_eq!(
        history["lines"],
        json!([{"user": "troll", "text": "before"}])
    );
    troll_ws
        .send(json!({"type": "chat", "text": "after"}))
        .await;
    refused(&mut troll_ws, "forbidden").await;

    // Marked as a cheater: the rated game under way counts for nothing,
    // and a new rated challenge with them is casual.
    let (_, marked) = act(json!({"action": "cheater", "report": cheat_report["id"]})).await;
    assert_eq!(marked["action"], "cheater");
    assert_eq!(
        post(&server, &format!("/api/board/game/{game}/resign"), &cheat)
            .await
            .0,
        200
    );
    server
        .wait_state(&game, "the resignation", |s| s["status"] == "finished")
        .await;
    let (_, profile) = server.get("/api/players/alice").await;
    assert_eq!(profile["rating"], 1500, "{profile}");
    let (status, casual) = read(
        server
            .http
            .post(server.url("/api/challenge/cheat"))
            .bearer_auth(&alice.token)
            .form(&[("rated", "true")])
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(status, 200);
    assert_eq!(casual["rated"], false, "{casual}");

    // Closed by a moderator: nothing logs in as them; name and games stay.
    assert_eq!(
        act(json!({"action": "close", "username": "troll"})).await.0,
        201
    );
    assert_eq!(
        by_token(&server, get.clone(), "/api/account", &troll.token, None)
            .await
            .0,
        401
    );
    assert_eq!(
        by_cookie(&server, get.clone(), "/api/account", &troll, None)
            .await
            .0,
        401
    );
    let (status, _) = server
        .post(
            "/api/session",
            None,
            Some(json!({"name": "troll", "password": PASSWORD})),
        )
        .await;
    assert_eq!(status, 401);
    let kept = server.state(&troll_game).await;
    assert!(
        [&kept["white"]["name"], &kept["black"]["name"]].contains(&&json!("troll")),
        "{kept}"
    );
    lichess_error(
        &post(&server, "/api/challenge/troll", &alice).await,
        400,
        "closed",
    );

    // The audit log: every action, newest first, the grant as the
    // operator's; the queue is empty.
    let (status, log) = by_cookie(&server, get.clone(), "/api/mod/log", &boss, None).await;
    assert_eq!(status, 200);
    let actions: Vec<(&str, &str, Value)> = log["actions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| {
            (
                a["action"].as_str().unwrap(),
                a["target"].as_str().unwrap(),
                a["moderator"].clone(),
            )
        })
        .collect();
    assert_eq!(
        actions,
        [
            ("close", "troll", json!("Boss")),
            ("cheater", "cheat", json!("Boss")),
            ("timeout", "troll", json!("Boss")),
            ("warn", "troll", json!("Boss")),
            ("grant", "Boss", Value::Null),
        ]
    );
    assert_eq!(log["actions"][2]["details"], "30 minutes");
    assert_eq!(log["actions"][1]["report_id"], cheat_report["id"]);
    let (_, queue) = by_cookie(&server, get.clone(), "/api/mod/reports", &boss, None).await;
    assert_eq!(queue["reports"], json!([]));
    let (code, said) = admin(&db, &["revoke", "Boss", "moderator"]).await;
    assert_eq!(
        (code, said.as_str()),
        (Some(0), "Boss is no longer a moderator")
    );
    assert_error(
        &by_cookie(&server, get, "/api/mod/log", &boss, None).await,
        403,
        "forbidden",
    );
    server.stop().await;
}

#[tokio::test]
async fn leaving_closes_the_account_and_exports_its_data() {
    let db = TestDb::new();
    let server = TestServer::start(test_config(&db)).await;
    let erin = sign_up(&server, "erin").await;
    let frank = sign_up(&server, "frank").await;
    let game = challenge_game(&server, &erin, &frank, "color=white").await;
    server.play(&game, &erin.token, "e2e4").await;
    assert_eq!(
        post(&server, &format!("/api/board/game/{game}/resign"), &frank)
            .await
            .0,
        200
    );
    assert_eq!(post(&server, "/api/rel/follow/frank", &erin).await.0, 200);

    // The export: one JSON download with the account and every game's PGN.
    let (status, _) = by_token(
        &server,
        reqwest::Method::GET,
        "/api/account/export",
        &erin.token,
        None,
    )
    .await;
    assert_eq!(status, 403);
    let response = server
        .http
        .get(server.url("/api/account/export"))
        .header("cookie", &erin.cookie)
        .send()
        .await
        .unwrap();
    assert_eq!(response.status().as_u16(), 200);
    assert_eq!(
        response.headers()["content-disposition"],
        "attachment; filename=\"rookery-erin.json\""
    );
    let export: Value = response.json().await.unwrap();
    assert_eq!(export["account"]["name"], "erin");
    assert_eq!(export["social"]["following"], json!(["frank"]));
    assert_eq!(export["games"], 1);
    let pgn = export["pgn"].as_str().unwrap();
    assert!(
        pgn.contains("[White \"erin\"]") && pgn.contains("1. e4"),
        "{pgn}"
    );
    assert!(pgn.contains("[Result \"1-0\"]"), "{pgn}");

    // Closing asks for the password; then every credential is dead.
    let close = |password: &'static str| {
        let (server, cookie) = (&server, erin.cookie.clone());
        async move {
            let response = server
                .http
                .post(server.url("/api/account/close"))
                .header("cookie", cookie)
                .json(&json!({"password": password}))
                .send()
                .await
                .unwrap();
            let clears = response
                .headers()
                .get("set-cookie")
                .and_then(|v| v.to_str().ok())
                .is_some_and(|v| v.contains("Max-Age=0"));
            (response.status().as_u16(), clears)
        }
    };
    assert_eq!(close("not my password").await, (401, false));
    assert_eq!(
        by_token(
            &server,
            reqwest::Method::GET,
            "/api/account",
            &erin.token,
            None
        )
        .await
        .0,
        200
    );
    assert_eq!(close(PASSWORD).await, (204, true));
    assert_eq!(
        by_token(
            &server,
            reqwest::Method::GET,
            "/api/account",
            &erin.token,
            None
        )
        .await
        .0,
        401
    );
    assert_eq!(
        by_cookie(&server, reqwest::Method::GET, "/api/account", &erin, None)
            .await
            .0,
        401
    );
    let (status, _) = server
        .post(
            "/api/session",
            None,
            Some(json!({"name": "erin", "password": PASSWORD})),
        )
        .await;
    assert_eq!(status, 401);
    // The name is kept (nobody else takes it) and shown as closed; the
    // games stay under it.
    let (status, _) = server
        .post(
            "/api/accounts",
            None,
            Some(json!({"name": "Erin", "password": PASSWORD})),
        )
        .await;
    assert_eq!(status, 409);
    assert_eq!(server.state(&game).await["white"]["name"], "erin");
    assert_eq!(post(&server, "/api/rel/follow/erin", &frank).await.0, 200);
    let following = ndjson(&server, "/api/rel/following", &frank).await;
    assert_eq!(following[0]["disabled"], true);
    lichess_error(
        &post(&server, "/api/challenge/erin", &frank).await,
        400,
        "closed",
    );
    server.stop().await;
}

//! Quick pairing (issue 38): the lobby's pools over `GET /ws/lobby` and
//! lichess's `POST /api/board/seek`, from outside: counts shown live,
//! two people of a pool paired into a rated game (accounts) or a casual
//! one (anonymous), leaving the pool by closing the socket, a seek held
//! open until paired and cancelled by closing it, a correspondence seek.

mod support;

use std::time::Duration;

use futures_util::StreamExt;
use serde_json::{json, Value};
use support::*;
use tokio_tungstenite::tungstenite::client::IntoClientRequest;

/// An account with a token that may play and challenge.
async fn person(server: &TestServer, name: &str) -> Account {
    account(server, name, &["play", "challenge"]).await
}

async fn lobby(server: &TestServer, cookie: Option<&str>) -> WsClient {
    let mut request = server.ws_url("/ws/lobby").into_client_request().unwrap();
    if let Some(cookie) = cookie {
        request
            .headers_mut()
            .insert("cookie", cookie.parse().unwrap());
    }
    let (socket, _) = tokio_tungstenite::connect_async(request)
        .await
        .expect("connect");
    WsClient { socket }
}

/// The next message of `kind` (counts and others skipped).
async fn next_of(ws: &mut WsClient, kind: &str) -> Value {
    within(Duration::from_secs(20), kind, async {
        loop {
            let message = ws.next().await;
            if message["type"] == kind {
                return message;
            }
        }
    })
    .await
}

/// Counts until `pool` shows `waiting`: that message.
async fn waiting_becomes(ws: &mut WsClient, pool: &str, waiting: u64) -> Value {
    within(Duration::from_secs(20), "the pool's count", async {
        loop {
            let message = next_of(ws, "pools").await;
            let entry = message["pools"]
                .as_array()
                .unwrap()
                .iter()
                .find(|p| p["id"] == pool)
                .cloned()
                .expect("the pool");
            if entry["waiting"] == waiting {
                return message;
            }
        }
    })
    .await
}

fn fast(db: &TestDb) -> rookery_server::Config {
    let mut config = test_config(db);
    config.play.pool_wave_ms = 50;
    config.play.pool_grace_ms = 200;
    config
}

#[tokio::test]
async fn two_accounts_in_a_pool_are_paired_into_a_rated_game() {
    let db = TestDb::new();
    let server = TestServer::start(fast(&db)).await;
    let ann = person(&server, "Ann").await;
    let bob = person(&server, "Bob").await;
    let mut watcher = lobby(&server, None).await;
    let first = next_of(&mut watcher, "pools").await;
    let ids: Vec<&str> = first["pools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["id"].as_str().unwrap())
        .collect();
    assert_eq!(
        ids,
        ["1+0", "2+1", "3+0", "3+2", "5+0", "5+3", "10+0", "10+5", "15+10", "30+0", "30+20"]
    );

    let mut a = lobby(&server, Some(&ann.cookie)).await;
    a.send(json!({"type": "enter", "pool": "7+7"})).await;
    let refused = next_of(&mut a, "error").await;
    assert_eq!(refused["code"], "bad_request");
    a.send(json!({"type": "enter", "pool": "5+3"})).await;
    let entered = next_of(&mut a, "entered").await;
    assert_eq!(entered["pool"], "5+3");
    waiting_becomes(&mut watcher, "5+3", 1).await;

    let mut b = lobby(&server, Some(&bob.cookie)).await;
    b.send(json!({"type": "enter", "pool": "5+3"})).await;
    let paired_a = next_of(&mut a, "paired").await;
    let paired_b = next_of(&mut b, "paired").await;
    assert_eq!(paired_a["game_id"], paired_b["game_id"]);
    assert_ne!(paired_a["color"], paired_b["color"]);
    let id = paired_a["game_id"].as_str().unwrap().to_string();
    let (status, game) = server.get(&format!("/api/games/{id}")).await;
    assert_eq!(status, 200);
    assert_eq!(game["status"], "active");
    assert_eq!(game["rated"], true, "accounts play rated games");
    assert_eq!(game["clock"]["white_ms"], 300_000);
    assert_eq!(game["clock"]["increment_ms"], 3_000);
    let names: Vec<&str> = [&game["white"]["name"], &game["black"]["name"]]
        .iter()
        .map(|n| n.as_str().unwrap())
        .collect();
    assert!(names.contains(&"Ann") && names.contains(&"Bob"), "{game}");
    let mut counts = waiting_becomes(&mut watcher, "5+3", 0).await;
    // The "playing" count catches up (read every two seconds), maybe in the
    // very message that emptied the pool: counts are pushed only when they
    // change.
    within(Duration::from_secs(20), "the playing count", async {
        while counts["pools"][5]["playing"] != 2 {
            counts = next_of(&mut watcher, "pools").await;
        }
    })
    .await;

    // Their colours balance: the one who had white has black next time.
    let ann_was = if paired_a["color"] == "white" {
        "white"
    } else {
        "black"
    };
    server
        .post(
            &format!("/api/board/game/{id}/resign"),
            Some(&ann.token),
            None,
        )
        .await;
    a.send(json!({"type": "enter", "pool": "3+2"})).await;
    b.send(json!({"type": "enter", "pool": "3+2"})).await;
    let again = next_of(&mut a, "paired").await;
    assert_ne!(again["color"], ann_was, "colours alternate");
    server.stop().await;
}

#[tokio::test]
async fn anonymous_people_play_casual_games_and_a_closed_socket_leaves_the_pool() {
    let db = TestDb::new();
    let server = TestServer::start(fast(&db)).await;
    let mut watcher = lobby(&server, None).await;
    let mut gone = lobby(&server, None).await;
    gone.send(json!({"type": "enter", "pool": "1+0"})).await;
    next_of(&mut gone, "entered").await;
    waiting_becomes(&mut watcher, "1+0", 1).await;
    drop(gone);
    // After the grace, the place is gone.
    waiting_becomes(&mut watcher, "1+0", 0).await;

    let mut x = lobby(&server, None).await;
    let mut y = lobby(&server, None).await;
    x.send(json!({"type": "enter", "pool": "1+0"})).await;
    next_of(&mut x, "entered").await;
    // Leaving on request, then coming back.
    x.send(json!({"type": "leave"})).await;
    next_of(&mut x, "left").await;
    x.send(json!({"type": "enter", "pool": "1+0"})).await;
    y.send(json!({"type": "enter", "pool": "1+0"})).await;
    let px = next_of(&mut x, "paired").await;
    let py = next_of(&mut y, "paired").await;
    let id = px["game_id"].as_str().unwrap();
    let (_, game) = server.get(&format!("/api/games/{id}")).await;
    assert_eq!(game["rated"], false, "anonymous games are casual");
    // Each plays with the token it was told.
    let (white, black) = if px["color"] == "white" {
        (&px, &py)
    } else {
        (&py, &px)
    };
    server
        .play(id, white["token"].as_str().unwrap(), "e2e4")
        .await;
    server
        .play(id, black["token"].as_str().unwrap(), "e7e5")
        .await;
    server.stop().await;
}

/// A held `POST /api/board/seek`: its lines (keep-alives) until it ends.
async fn drain(response: reqwest::Response) {
    let mut body = response.bytes_stream();
    within(Duration::from_secs(30), "the seek to end", async {
        while let Some(chunk) = body.next().await {
            let chunk = chunk.expect("a chunk");
            assert!(chunk.iter().all(|b| *b == b'\n'), "only keep-alives");
        }
    })
    .await;
}

async fn seek(server: &TestServer, token: &str, body: &str) -> reqwest::Response {
    server
        .http
        .post(server.url("/api/board/seek"))
        .bearer_auth(token)
        .header("content-type", "application/x-www-form-urlencoded")
        .body(body.to_string())
        .send()
        .await
        .expect("seek")
}

#[tokio::test]
async fn a_board_seek_stays_open_until_paired_and_closing_it_cancels_it() {
    let db = TestDb::new();
    let server = TestServer::start(fast(&db)).await;
    let cid = person(&server, "Cid").await;
    let dee = person(&server, "Dee").await;
    let mut watcher = lobby(&server, None).await;

    // Refusals, in lichess's shape.
    for bad in [
        "time=5&increment=3&variant=chess960",
        "time=5&days=3",
        "ratingRange=abc&time=5",
        "time=0&increment=0",
        "days=4",
    ] {
        let response = seek(&server, &cid.token, bad).await;
        assert_eq!(response.status().as_u16(), 400, "{bad}");
        let body: Value = response.json().await.unwrap();
        assert!(body["error"].is_string(), "{body}");
    }

    // Cancelled by closing the request.
    let held = seek(
        &server,
        &cid.token,
        "time=5&increment=3&rated=true&color=random",
    )
    .await;
    assert_eq!(held.status().as_u16(), 200);
    waiting_becomes(&mut watcher, "5+3", 1).await;
    drop(held);
    waiting_becomes(&mut watcher, "5+3", 0).await;

    // Paired: both requests end; the game is on both event streams.
    let events = server
        .http
        .get(server.url("/api/stream/event"))
        .bearer_auth(&dee.token)
        .send()
        .await
        .unwrap();
    let first = seek(
        &server,
        &cid.token,
        "time=5&increment=3&rated=true&color=white",
    )
    .await;
    waiting_becomes(&mut watcher, "5+3", 1).await;
    let second = seek(&server, &dee.token, "time=5&increment=3&rated=true").await;
    drain(first).await;
    drain(second).await;
    let mut lines = events.bytes_stream();
    let started: Value = within(Duration::from_secs(20), "gameStart", async {
        let mut buffer = String::new();
        loop {
            let chunk = lines.next().await.expect("more").expect("chunk");
            buffer.push_str(std::str::from_utf8(&chunk).unwrap());
            while let Some(end) = buffer.find('\n') {
                let line: String = buffer.drain(..=end).collect();
                if let Ok(event) = serde_json::from_str::<Value>(line.trim()) {
                    if event["type"] == "gameStart" {
                        return event;
                    }
                }
            }
        }
    })
    .await;
    assert_eq!(started["game"]["color"], "black", "Cid asked for white");
    assert_eq!(started["game"]["rated"], true);

    // A correspondence seek answers at once with its game.
    let response = seek(&server, &cid.token, "days=3").await;
    assert_eq!(response.status().as_u16(), 200);
    let answer: Value = response.json().await.unwrap();
    let id = answer["id"].as_str().expect("an id");
    let (_, game) = server.get(&format!("/api/games/{id}")).await;
    assert_eq!(game["status"], "waiting");
    assert!(game["clock"].is_null());
    server.stop().await;
}

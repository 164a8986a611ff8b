//! Games across the nodes of a cluster (issue 13): real `rookery-server`
//! processes on one throwaway PostgreSQL and one throwaway `nats-server`.
//! A game is played with its seats and spectators on different nodes; its
//! owner is killed and another node takes it over; a node cut off from NATS
//! loses its games and cannot write them any more (the fence).

mod support;

use std::time::{Duration, Instant};

use serde_json::json;
use support::cluster::{free_port, shared_postgres, Nats};
use support::nodes::*;
use support::*;
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::watch;

/// Reads `socket`'s states until one has all of `expected`, checking that
/// the moves only ever grow, one ply at a time, in `expected`'s order.
async fn follow(socket: &mut WsClient, expected: &[&str]) {
    let mut seen: Option<usize> = None;
    loop {
        let state = socket.next_state().await;
        let moves = moves(&state);
        if let Some(seen) = seen {
            assert!(moves.len() >= seen, "moves went back: {moves:?}");
            assert!(moves.len() <= seen + 1, "a state was skipped: {moves:?}");
        }
        assert_eq!(moves, expected[..moves.len()], "another order");
        if moves.len() == expected.len() {
            return;
        }
        seen = Some(moves.len());
    }
}

#[tokio::test]
async fn seats_and_spectators_on_three_nodes_play_one_game() {
    let db = TestDb::on_postgres(shared_postgres());
    let nats = Nats::start();
    let (_a, a) = node("a", &db, &nats.url()).await;
    let (_b, b) = node("b", &db, &nats.url()).await;
    let (_c, c) = node("c", &db, &nats.url()).await;

    let (id, white, black) = timed_game(&a, &b).await;
    // Created on A: A owns it.
    let (owner, epoch) = lease(&db, &id);
    assert_eq!(epoch, 1);

    let mut white_socket = WsClient::connect_base(&a, &id, Some(&white)).await;
    let mut black_socket = WsClient::connect_base(&b, &id, Some(&black)).await;
    let mut watcher = WsClient::connect_base(&c, &id, None).await;
    for socket in [&mut white_socket, &mut black_socket, &mut watcher] {
        let first = socket.next_state().await;
        assert_eq!(first["status"], "active");
    }

    let line = ["e2e4", "e7e5", "g1f3", "b8c6", "f1b5"];
    // Moves over each node's WebSocket and HTTP, whoever owns the game.
    white_socket
        .send(json!({"type": "move", "uci": line[0]}))
        .await;
    follow(&mut black_socket, &line[..1]).await;
    black_socket
        .send(json!({"type": "move", "uci": line[1]}))
        .await;
    follow(&mut white_socket, &line[..2]).await;
    let (status, state) = play(&c, &id, &white, line[2]).await;
    assert_eq!(
        status, 200,
        "a move sent to a node that does not own the game: {state}"
    );
    let (status, state) = play(&a, &id, &black, line[3]).await;
    assert_eq!(status, 200, "{state}");
    // A refusal from the owner comes back as the contract's error.
    let (status, refused) = play(&b, &id, &black, "a7a6").await;
    assert_eq!(
        (status, refused["error"]["code"].as_str()),
        (409, Some("not_your_turn")),
        "{refused}"
    );
    let (status, refused) = play(&c, &id, &white, "e1e3").await;
    assert_eq!(status, 400, "{refused}");
    assert_eq!(refused["error"]["code"], "illegal_move");
    white_socket
        .send(json!({"type": "move", "uci": line[4]}))
        .await;

    // Every subscriber, on every node, saw every state in order.
    follow(&mut watcher, &line).await;
    follow(&mut black_socket, &line).await;
    for base in [&a, &b, &c] {
        let (status, state) = get(base, &format!("/api/games/{id}")).await;
        assert_eq!(status, 200);
        assert_eq!(moves(&state), line, "the game as {base} shows it");
        // Presence is counted across nodes: both seats, one spectator.
        assert_eq!(state["white"]["connected"], true, "{state}");
        assert_eq!(state["black"]["connected"], true, "{state}");
    }
    // No node took the game from its owner meanwhile.
    assert_eq!(lease(&db, &id), (owner, 1));

    // The result counts once, and every node's scoreboard says the same.
    let (status, over) = post(
        &b,
        &format!("/api/games/{id}/resign"),
        Some(&black),
        json!({}),
    )
    .await;
    assert_eq!(status, 200, "{over}");
    assert_eq!(over["result"], "1-0");
    let boards = within(WAIT, "the same scoreboard on every node", async {
        loop {
            let mut boards = Vec::new();
            for base in [&a, &b, &c] {
                boards.push(get(base, "/api/scoreboard").await.1);
            }
            if boards[0]["colors"]["white"] == 1 && boards.iter().all(|b| *b == boards[0]) {
                return boards;
            }
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
    })
    .await;
    assert_eq!(boards[0]["colors"]["black"], 0, "{}", boards[0]);
}

#[tokio::test]
async fn another_node_takes_over_the_game_of_a_killed_owner() {
    let db = TestDb::on_postgres(shared_postgres());
    let nats = Nats::start();
    let (mut a, a_base) = node("a", &db, &nats.url()).await;
    let (_b, b) = node("b", &db, &nats.url()).await;
    let (_c, c) = node("c", &db, &nats.url()).await;

    let (id, white, black) = timed_game(&a_base, &b).await;
    let acknowledged = ["d2d4", "d7d5", "c2c4"];
    for (ply, uci) in acknowledged.iter().enumerate() {
        let (token, via) = if ply % 2 == 0 {
            (&white, &c)
        } else {
            (&black, &b)
        };
        let (status, state) = play(via, &id, token, uci).await;
        assert_eq!(status, 200, "{state}");
    }
    let (owner, epoch) = lease(&db, &id);
    let before = get(&b, &format!("/api/games/{id}")).await.1;

    a.kill().await;
    let killed = Instant::now();
    // Black's next move, sent to B: it waits for the lease to expire,
    // then lands on whichever node took the game over.
    let (status, state) = play_until_accepted(&b, &id, &black, "e7e6").await;
    let takeover = killed.elapsed();
    eprintln!("takeover after SIGKILL of the owner: {takeover:?}");
    assert_eq!(status, 200);
    assert!(
        takeover < Duration::from_millis(LEASE_MS + 3_000),
        "takeover took {takeover:?}"
    );
    // Every acknowledged move is there, and the new one after them.
    assert_eq!(moves(&state), ["d2d4", "d7d5", "c2c4", "e7e6"]);
    let (new_owner, new_epoch) = lease(&db, &id);
    assert_ne!(new_owner, owner, "the dead node still owns the game");
    assert!(new_epoch > epoch, "epoch {new_epoch} after {epoch}");
    // The clock went on: black was charged for the time the move took.
    let black_ms = state["clock"]["black_ms"].as_i64().expect("clock");
    assert!(
        black_ms < before["clock"]["black_ms"].as_i64().expect("clock"),
        "{state}"
    );
    // The game goes on for a spectator on the third node.
    let mut watcher = WsClient::connect_base(&c, &id, None).await;
    assert_eq!(moves(&watcher.next_state().await).len(), 4);
    let (status, state) = play(&c, &id, &white, "b1c3").await;
    assert_eq!(status, 200, "{state}");
    follow(&mut watcher, &["d2d4", "d7d5", "c2c4", "e7e6", "b1c3"]).await;
}

/// A TCP relay between a node and NATS that the test can cut: the node's
/// connection drops and new ones are refused, as in a network partition.
struct Relay {
    port: u16,
    cut: watch::Sender<bool>,
    /// Silence: the connections stay open but nothing crosses any more,
    /// as when a firewall drops the packets (no reset, no close).
    silence: watch::Sender<bool>,
}

impl Relay {
    async fn start(nats_port: u16) -> Relay {
        let port = free_port();
        let listener = TcpListener::bind(("127.0.0.1", port)).await.expect("bind");
        let (cut, cut_rx) = watch::channel(false);
        let (silence, silence_rx) = watch::channel(false);
        tokio::spawn(async move {
            loop {
                let Ok((mut inbound, _)) = listener.accept().await else {
                    return;
                };
                if *cut_rx.borrow() {
                    // Partitioned: refuse by closing at once.
                    continue;
                }
                let mut cut_rx = cut_rx.clone();
                let mut silence_rx = silence_rx.clone();
                tokio::spawn(async move {
                    let Ok(mut outbound) = TcpStream::connect(("127.0.0.1", nats_port)).await
                    else {
                        return;
                    };
                    let silenced = tokio::select! {
                        _ = tokio::io::copy_bidirectional(&mut inbound, &mut outbound) => false,
                        _ = cut_rx.wait_for(|cut| *cut) => false,
                        _ = silence_rx.wait_for(|silent| *silent) => true,
                    };
                    if silenced {
                        // Both sockets held open, nothing read or written,
                        // until the test ends.
                        std::future::pending::<()>().await;
                    }
                    drop((inbound, outbound));
                });
            }
        });
        Relay { port, cut, silence }
    }

    fn url(&self) -> String {
        format!("nats://127.0.0.1:{}", self.port)
    }
}

#[tokio::test]
async fn a_node_cut_off_from_nats_loses_its_games_and_cannot_write_them() {
    owner_cut_off_from_nats(false).await;
}

/// Issue 42: the owner's NATS packets dropped (its connection neither
/// closed nor reset: the NATS client still believes it is connected for a
/// minute). Before, it kept its lease and every move through the other
/// node waited and failed; now its round trip through NATS goes
/// unanswered, it stops renewing, and the other node takes the game.
#[tokio::test]
async fn a_node_whose_nats_packets_are_dropped_gives_its_games_up() {
    owner_cut_off_from_nats(true).await;
}

async fn owner_cut_off_from_nats(silently: bool) {
    let db = TestDb::on_postgres(shared_postgres());
    let nats = Nats::start();
    let relay = Relay::start(nats.port).await;
    let (_a, a) = node("a", &db, &relay.url()).await;
    let (_b, b) = node("b", &db, &nats.url()).await;

    let (id, white, black) = timed_game(&a, &b).await;
    let (status, state) = play(&b, &id, &white, "e2e4").await;
    assert_eq!(status, 200, "{state}");
    let (owner_a, epoch) = lease(&db, &id);

    if silently {
        relay.silence.send_replace(true);
    } else {
        relay.cut.send_replace(true);
    }
    // A stops renewing; once its lease has expired, B's sweep takes the
    // game (its clock runs) without waiting for a command.
    within(WAIT, "B to take the game over", async {
        loop {
            let (owner, now) = lease(&db, &id);
            if owner != owner_a && now > epoch {
                return;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    })
    .await;

    // A still has the game in memory, but its write is fenced: refused,
    // and nothing of it stored.
    let (status, refused) = play(&a, &id, &black, "c7c5").await;
    assert_eq!(status, 503, "a partitioned node wrote the game: {refused}");
    assert_eq!(refused["error"]["code"], "unavailable");
    // The game goes on on B, without A's move.
    let (status, state) = play(&b, &id, &black, "e7e5").await;
    assert_eq!(status, 200, "{state}");
    assert_eq!(moves(&state), ["e2e4", "e7e5"]);
    let database = db.postgres_database().expect("PostgreSQL");
    let stored = shared_postgres().query(
        database,
        &format!("SELECT string_agg(uci, ' ' ORDER BY ply) FROM moves WHERE game_id = '{id}'"),
    );
    assert_eq!(stored, "e2e4 e7e5");
}

/// The next NDJSON event of an event stream (keep-alive newlines skipped).
async fn next_event<B: AsRef<[u8]>>(
    stream: &mut (impl futures_util::Stream<Item = reqwest::Result<B>> + Unpin),
    buffer: &mut String,
) -> serde_json::Value {
    use futures_util::StreamExt;
    within(WAIT, "an event", async {
        loop {
            if let Some(end) = buffer.find('\n') {
                let line: String = buffer.drain(..=end).collect();
                if line.trim().is_empty() {
                    continue;
                }
                return serde_json::from_str(line.trim()).expect("an event line");
            }
            let chunk = stream
                .next()
                .await
                .expect("the stream goes on")
                .expect("bytes");
            buffer.push_str(std::str::from_utf8(chunk.as_ref()).expect("UTF-8"));
        }
    })
    .await
}

/// Issue 42: a person's event stream hears their events whichever node
/// handles them. Bob's stream is open on A; Alice challenges him through B,
/// he accepts through B: both events reach his stream on A (they used to be
/// heard only by streams on B).
#[tokio::test]
async fn events_follow_a_person_across_nodes() {
    let db = TestDb::on_postgres(shared_postgres());
    let nats = Nats::start();
    let (_a, a) = node("a", &db, &nats.url()).await;
    let (_b, b) = node("b", &db, &nats.url()).await;
    let register = |name: &'static str| {
        let b = b.clone();
        async move {
            let (status, player) = post(&b, "/api/players", None, json!({ "name": name })).await;
            assert_eq!(status, 201, "{player}");
            player["token"].as_str().expect("token").to_string()
        }
    };
    let alice = register("alice").await;
    let bob = register("bob").await;
    let http = reqwest::Client::new();
    let response = http
        .get(format!("{a}/api/stream/event"))
        .bearer_auth(&bob)
        .send()
        .await
        .expect("the stream opens");
    assert_eq!(response.status(), 200);
    let mut stream = Box::pin(response.bytes_stream());
    let mut buffer = String::new();
    // Subscribed on A before the challenge is made on B.
    tokio::time::sleep(Duration::from_millis(200)).await;
    let challenge = http
        .post(format!("{b}/api/challenge/bob"))
        .bearer_auth(&alice)
        .form(&[("clock.limit", "300"), ("clock.increment", "0")])
        .send()
        .await
        .expect("challenge");
    assert_eq!(challenge.status(), 200);
    let challenge: serde_json::Value = challenge.json().await.expect("JSON");
    let id = challenge["id"].as_str().expect("id").to_string();
    let event = next_event(&mut stream, &mut buffer).await;
    assert_eq!(event["type"], "challenge", "{event}");
    assert_eq!(event["challenge"]["id"], id.as_str());
    let accepted = http
        .post(format!("{b}/api/challenge/{id}/accept"))
        .bearer_auth(&bob)
        .send()
        .await
        .expect("accept");
    assert_eq!(accepted.status(), 200);
    let event = next_event(&mut stream, &mut buffer).await;
    assert_eq!(event["type"], "gameStart", "{event}");
    assert_eq!(event["game"]["id"], id.as_str());

    // Who is online is the cluster's: B lists bob, whose stream is on A,
    // with his game (the nodes announce their streams every 5 s), and
    // lichess's user object on B says he is online.
    let listed = |online: &serde_json::Value| {
        online["players"]
            .as_array()
            .and_then(|players| players.iter().find(|p| p["name"] == "bob"))
            .cloned()
    };
    let bob_on_b = within(WAIT, "bob online on B", async {
        loop {
            let (status, online) = get(&b, "/api/online").await;
            assert_eq!(status, 200, "{online}");
            if let Some(bob) = listed(&online) {
                return bob;
            }
            tokio::time::sleep(Duration::from_millis(250)).await;
        }
    })
    .await;
    assert_eq!(bob_on_b["playing"], id.as_str(), "{bob_on_b}");
    let (status, user) = get(&b, "/api/user/bob").await;
    assert_eq!(status, 200, "{user}");
    assert_eq!(user["online"], true, "{user}");
    // His stream closed, A's next announcement drops him on B too.
    drop(stream);
    within(WAIT, "bob offline on B", async {
        loop {
            let (_, online) = get(&b, "/api/online").await;
            if listed(&online).is_none() {
                return;
            }
            tokio::time::sleep(Duration::from_millis(250)).await;
        }
    })
    .await;
    let (_, user) = get(&b, "/api/user/bob").await;
    assert_eq!(user["online"], false, "{user}");
}

//! Swiss tournaments of a team (issue 39), from the outside: a leader
//! creates one with rounds started by hand, five members join (an odd
//! number: a bye each round), round 1 is paired and played with the server
//! restarted in its middle (the result before the stop is kept, the round
//! finishes after it), one player withdraws and one asks for a bye before
//! round 2, and the tournament runs to its end. At each round the TRF
//! export reads back with `rookery_swiss::trf::parse` and pairs the next
//! round exactly as the server then does; the final standings agree with
//! the library's; games are ordinary games whose PGN names the tournament
//! and the round; the page's socket pushes each change.

mod support;

use std::collections::HashMap;
use std::time::Duration;

use rookery_swiss::{pair_next_round, standings, trf};
use serde_json::{json, Value};
use support::*;

/// A person with a token of the `play` and `challenge` scopes
/// (`support::person`).
async fn player(server: &TestServer, name: &str) -> String {
    person(server, name, &["play", "challenge"]).await
}

async fn swiss(server: &TestServer, id: &str) -> Value {
    let (status, swiss) = server.get(&format!("/api/swiss/{id}")).await;
    assert_eq!(status, 200, "{swiss}");
    swiss
}

/// Polls the tournament until `done` holds (at most [`WAIT`]).
async fn wait_swiss(
    server: &TestServer,
    id: &str,
    what: &str,
    done: impl Fn(&Value) -> bool,
) -> Value {
    within(WAIT, what, async {
        loop {
            let state = swiss(server, id).await;
            if done(&state) {
                return state;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    })
    .await
}

/// The pairings of `round` (1-based) as the server shows them.
fn pairings(state: &Value, round: usize) -> Vec<Value> {
    state["rounds"][round - 1]["pairings"]
        .as_array()
        .cloned()
        .unwrap_or_default()
}

/// A round as the library writes it: `white-black` per game and `bye:X`,
/// by names, sorted (colours included).
fn server_round(state: &Value, round: usize) -> Vec<String> {
    let mut lines: Vec<String> = pairings(state, round)
        .iter()
        .map(|p| match p["bye"].as_str() {
            Some(kind) => format!("{kind}:{}", p["player"].as_str().unwrap_or_default()),
            None => format!(
                "{}-{}",
                p["white"].as_str().unwrap_or_default(),
                p["black"].as_str().unwrap_or_default()
            ),
        })
        .collect();
    lines.sort();
    lines
}

/// The next round as `rookery_swiss` pairs the tournament's TRF export,
/// in [`server_round`]'s words (requested byes from the TRF's pending
/// column, as the server gives them).
async fn library_round(server: &TestServer, id: &str, requested: &str) -> Vec<String> {
    let (status, content_type, text) = server.get_text(&format!("/swiss/{id}.trf")).await;
    assert_eq!(status, 200, "{text}");
    assert!(content_type.starts_with("text/plain"), "{content_type}");
    let t = trf::parse(&text).unwrap_or_else(|err| panic!("the TRF reads back: {err}\n{text}"));
    let pairing = pair_next_round(&t, &t.present_next()).expect("a legal pairing");
    let name = |p: rookery_swiss::PlayerId| t.player(p).map(|p| p.name.clone()).unwrap_or_default();
    let mut lines: Vec<String> = pairing
        .pairs
        .iter()
        .map(|&(w, b)| format!("{}-{}", name(w), name(b)))
        .chain(pairing.bye.map(|p| format!("pab:{}", name(p))))
        .chain(
            t.next_round_byes
                .iter()
                .map(|b| format!("{requested}:{}", name(b.player))),
        )
        .collect();
    lines.sort();
    lines
}

/// Plays a paired game to `result` over the API: the loser resigns, or a
/// draw is offered and accepted.
async fn play(
    server: &TestServer,
    tokens: &HashMap<String, String>,
    pairing: &Value,
    result: &str,
) {
    let game = pairing["gameId"].as_str().expect("a game");
    let token = |side: &str| tokens[pairing[side].as_str().expect("a player")].clone();
    let act = |what: &'static str, who: String| async move {
        let (status, state) = server
            .post(&format!("/api/games/{game}/{what}"), Some(&who), None)
            .await;
        assert_eq!(status, 200, "{what}: {state}");
    };
    match result {
        "1-0" => act("resign", token("black")).await,
        "0-1" => act("resign", token("white")).await,
        _ => {
            act("draw", token("white")).await;
            act("draw", token("black")).await;
        }
    }
}

/// The next text message of the page's socket, as JSON.
async fn next_message(socket: &mut Socket) -> Value {
    use futures_util::StreamExt;
    loop {
        let message = within(WAIT, "a message", socket.next())
            .await
            .expect("the socket open")
            .expect("a frame");
        if let tokio_tungstenite::tungstenite::Message::Text(text) = message {
            return serde_json::from_str(&text).expect("JSON");
        }
    }
}

#[tokio::test]
async fn a_team_swiss_runs_to_its_end_with_byes_a_withdrawal_and_a_restart() {
    let db = TestDb::new();
    let mut server = TestServer::start(test_config(&db)).await;
    let leader = player(&server, "lead").await;
    let (status, team) = server
        .post(
            "/api/team",
            Some(&leader),
            Some(json!({"name": "Evening Club"})),
        )
        .await;
    assert_eq!(status, 200, "{team}");
    let names = ["ann", "ben", "cat", "dan", "eve"];
    let mut tokens = HashMap::new();
    for name in names {
        let token = player(&server, name).await;
        let (status, joined) = server
            .post("/team/evening-club/join", Some(&token), Some(json!({})))
            .await;
        assert_eq!(status, 200, "{joined}");
        tokens.insert(name.to_string(), token);
    }
    let outsider = player(&server, "out").await;

    // Only a leader creates; bad terms are refused.
    let terms = json!({
        "name": "Tuesday Swiss", "clock.limit": 60, "clock.increment": 0, "nbRounds": 3,
        "roundInterval": 99_999_999, "startsAt": 4_102_444_800_000i64, "rated": false,
    });
    let (status, refused) = server
        .post(
            "/api/swiss/new/evening-club",
            Some(&tokens["ann"]),
            Some(terms.clone()),
        )
        .await;
    assert_eq!(status, 403, "{refused}");
    let mut bad = terms.clone();
    bad["nbRounds"] = json!(1);
    let (status, refused) = server
        .post("/api/swiss/new/evening-club", Some(&leader), Some(bad))
        .await;
    assert_eq!(status, 400, "{refused}");
    assert!(refused["error"].is_string());
    let (status, created) = server
        .post("/api/swiss/new/evening-club", Some(&leader), Some(terms))
        .await;
    assert_eq!(status, 200, "{created}");
    let id = created["id"].as_str().expect("id").to_string();
    assert_eq!(created["status"], "created");
    assert_eq!(created["nbRounds"], 3);
    assert_eq!(created["clock"], json!({"limit": 60, "increment": 0}));
    assert_eq!(created["createdBy"], "lead");

    // Members join; someone outside the team cannot.
    let (status, refused) = server
        .post(&format!("/api/swiss/{id}/join"), Some(&outsider), None)
        .await;
    assert_eq!(status, 403, "{refused}");
    for name in names {
        let (status, ok) = server
            .post(&format!("/api/swiss/{id}/join"), Some(&tokens[name]), None)
            .await;
        assert_eq!(status, 200, "{ok}");
    }
    assert_eq!(swiss(&server, &id).await["nbPlayers"], 5);
    let (status, _, listed) = server.get_text("/api/team/evening-club/swiss").await;
    assert_eq!(status, 200);
    let listed: Value = serde_json::from_str(listed.lines().next().expect("a line")).expect("JSON");
    assert_eq!(listed["id"], id.as_str());

    // The page's socket: the tournament now, then each change.
    let (mut page, _) = within(
        WAIT,
        "the page's socket",
        tokio_tungstenite::connect_async(server.ws_url(&format!("/ws/swiss/{id}"))),
    )
    .await
    .expect("the page's socket");
    let first = next_message(&mut page).await;
    assert_eq!(first["type"], "swiss");
    assert_eq!(first["swiss"]["round"], 0);

    // Round 1, started by hand: what the library pairs from the TRF.
    let expected = library_round(&server, &id, "half").await;
    let (status, body) = server
        .post(
            &format!("/api/swiss/{id}/schedule-next-round"),
            Some(&tokens["ann"]),
            Some(json!({"date": 0})),
        )
        .await;
    assert_eq!(status, 403, "{body}");
    let (status, _) = server
        .post(
            &format!("/api/swiss/{id}/schedule-next-round"),
            Some(&leader),
            Some(json!({"date": 0})),
        )
        .await;
    assert_eq!(status, 200);
    let state = wait_swiss(&server, &id, "round 1 paired", |s| s["round"] == 1).await;
    assert_eq!(state["status"], "started");
    assert_eq!(
        server_round(&state, 1),
        expected,
        "round 1 as the library pairs it"
    );
    let round1 = pairings(&state, 1);
    assert_eq!(
        round1.iter().filter(|p| p["bye"] == "pab").count(),
        1,
        "{round1:?}"
    );
    let games1: Vec<&Value> = round1.iter().filter(|p| p["gameId"].is_string()).collect();
    assert_eq!(games1.len(), 2);
    // A paired player's games in play name the Swiss, as the gameStart
    // lines that open an event stream do (lichess's `nowPlaying`).
    let white = games1[0]["white"].as_str().expect("white");
    let (status, playing) = server
        .get_with("/api/account/playing", &tokens[white])
        .await;
    assert_eq!(status, 200, "{playing}");
    assert_eq!(
        playing["nowPlaying"][0]["gameId"], games1[0]["gameId"],
        "{playing}"
    );
    assert_eq!(playing["nowPlaying"][0]["source"], "swiss", "{playing}");
    assert_eq!(
        playing["nowPlaying"][0]["swissId"],
        id.as_str(),
        "{playing}"
    );
    let pushed = within(WAIT, "round 1 on the page's socket", async {
        loop {
            let message = next_message(&mut page).await;
            if message["swiss"]["round"] == 1 {
                return message;
            }
        }
    })
    .await;
    assert_eq!(
        pushed["rounds"][0]["pairings"].as_array().map(Vec::len),
        Some(3)
    );
    // Scheduling while the round is played is refused.
    let (status, _) = server
        .post(
            &format!("/api/swiss/{id}/schedule-next-round"),
            Some(&leader),
            Some(json!({})),
        )
        .await;
    assert_eq!(status, 400);

    // An ordinary game: its state, and its PGN naming the tournament.
    let first_game = games1[0]["gameId"].as_str().expect("game").to_string();
    let game = server.state(&first_game).await;
    assert_eq!(game["status"], "active");
    let (status, _, pgn) = server
        .get_text(&format!("/api/games/{first_game}/pgn"))
        .await;
    assert_eq!(status, 200);
    assert!(pgn.contains("[Event \"Tuesday Swiss\"]"), "{pgn}");
    assert!(pgn.contains("[Round \"1\"]"), "{pgn}");

    // Board 1 is played; its result is recorded; then the server stops
    // in the middle of the round and starts again on the same database.
    play(&server, &tokens, games1[0], "1-0").await;
    wait_swiss(&server, &id, "board 1's result", |s| {
        pairings(s, 1)[0]["result"] == "1-0"
    })
    .await;
    drop(page);
    server.stop().await;
    server = TestServer::start(test_config(&db)).await;
    let state = swiss(&server, &id).await;
    assert_eq!(state["round"], 1, "{state}");
    assert_eq!(
        pairings(&state, 1)[0]["result"],
        "1-0",
        "kept across the restart"
    );
    play(&server, &tokens, games1[1], "draw").await;
    let state = wait_swiss(&server, &id, "round 1 over", |s| s["nbOngoing"] == 0).await;
    assert_eq!(pairings(&state, 1)[1]["result"], "1/2-1/2");
    assert_eq!(state["status"], "started");

    // Before round 2: cat withdraws, dan asks for a bye.
    let (status, _) = server
        .post(
            &format!("/api/swiss/{id}/withdraw"),
            Some(&tokens["cat"]),
            None,
        )
        .await;
    assert_eq!(status, 200);
    let (status, _) = server
        .post(&format!("/api/swiss/{id}/bye"), Some(&tokens["dan"]), None)
        .await;
    assert_eq!(status, 200);
    let (status, refused) = server
        .post(&format!("/api/swiss/{id}/bye"), Some(&outsider), None)
        .await;
    assert_eq!(status, 404, "{refused}");
    let expected = library_round(&server, &id, "half").await;
    let (status, _) = server
        .post(
            &format!("/api/swiss/{id}/schedule-next-round"),
            Some(&leader),
            None,
        )
        .await;
    assert_eq!(status, 200);
    let state = wait_swiss(&server, &id, "round 2 paired", |s| s["round"] == 2).await;
    assert_eq!(
        server_round(&state, 2),
        expected,
        "round 2 as the library pairs it"
    );
    let round2 = pairings(&state, 2);
    assert!(round2
        .iter()
        .all(|p| p["white"] != "cat" && p["black"] != "cat" && p["player"] != "cat"));
    assert!(
        round2
            .iter()
            .any(|p| p["player"] == "dan" && p["bye"] == "half"),
        "{round2:?}"
    );
    assert_eq!(round2.iter().filter(|p| p["bye"] == "pab").count(), 1);
    for game in round2.iter().filter(|p| p["gameId"].is_string()) {
        play(&server, &tokens, game, "0-1").await;
    }
    wait_swiss(&server, &id, "round 2 over", |s| s["nbOngoing"] == 0).await;

    // Round 3, the last: dan is back, cat stays out (four players).
    let expected = library_round(&server, &id, "half").await;
    let (status, _) = server
        .post(
            &format!("/api/swiss/{id}/schedule-next-round"),
            Some(&leader),
            None,
        )
        .await;
    assert_eq!(status, 200);
    let state = wait_swiss(&server, &id, "round 3 paired", |s| s["round"] == 3).await;
    assert_eq!(
        server_round(&state, 3),
        expected,
        "round 3 as the library pairs it"
    );
    let round3 = pairings(&state, 3);
    assert_eq!(round3.len(), 2, "{round3:?}");
    for game in &round3 {
        play(&server, &tokens, game, "1-0").await;
    }
    let state = wait_swiss(&server, &id, "the tournament over", |s| {
        s["status"] == "finished"
    })
    .await;
    assert!(state.get("nextRound").is_none(), "{state}");

    // The final standings, lichess's results and the library's agree.
    let (status, content_type, results) =
        server.get_text(&format!("/api/swiss/{id}/results")).await;
    assert_eq!(status, 200);
    assert_eq!(content_type, "application/x-ndjson");
    let lines: Vec<Value> = results
        .lines()
        .map(|l| serde_json::from_str(l).expect("JSON"))
        .collect();
    assert_eq!(lines.len(), 5);
    let total: f64 = lines.iter().filter_map(|l| l["points"].as_f64()).sum();
    // Round 1: two games and a bye; round 2: one game, a bye and a half
    // point; round 3: two games.
    assert_eq!(total, 3.0 + 2.5 + 2.0);
    assert_eq!(lines[0]["rank"], 1);
    assert!(lines
        .iter()
        .any(|l| l["username"] == "cat" && l["absent"] == true));
    let (_, _, text) = server.get_text(&format!("/swiss/{id}.trf")).await;
    let t = trf::parse(&text).expect("the final TRF");
    assert_eq!(t.rounds.len(), 3);
    for s in standings(&t) {
        let name = &t.player(s.player).expect("a player").name;
        let line = lines
            .iter()
            .find(|l| l["username"] == name.as_str())
            .expect("in the results");
        assert_eq!(line["rank"], s.rank, "{name}");
        assert_eq!(
            line["points"].as_f64(),
            Some(f64::from(s.points.0) / 2.0),
            "{name}"
        );
        assert_eq!(
            line["buchholzCut1"].as_f64(),
            Some(f64::from(s.buchholz_cut1) / 2.0)
        );
        assert_eq!(
            line["sonnebornBerger"].as_f64(),
            Some(f64::from(s.sonneborn_berger) / 4.0)
        );
    }

    // The games' export: five games, each with its round.
    let (status, content_type, pgn) = server.get_text(&format!("/api/swiss/{id}/games")).await;
    assert_eq!(status, 200);
    assert_eq!(content_type, "application/x-chess-pgn");
    assert_eq!(pgn.matches("[Event \"Tuesday Swiss\"]").count(), 5, "{pgn}");
    assert_eq!(pgn.matches("[Round \"3\"]").count(), 2);

    // A finished tournament takes no one.
    let (status, _) = server
        .post(&format!("/api/swiss/{id}/join"), Some(&tokens["cat"]), None)
        .await;
    assert_eq!(status, 400);
    let (status, missing) = server.get("/api/swiss/nosuchid").await;
    assert_eq!(status, 404, "{missing}");
    server.stop().await;
}

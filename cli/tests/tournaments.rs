//! Tournaments in the terminal (issues 38 and 39), against a real
//! `rookery-server`: `rookery arena list` shows an arena; `rookery arena
//! join` joins it and plays the person's pairings one after the other
//! (the test plays the opponent over lichess's Board API, and types each
//! move into the client only once it shows its new game, as a person
//! would); `q` while waiting withdraws (a pause: the points stay).
//! `rookery swiss join` plays a team Swiss's round the same way.
//!
//! Like tests/server.rs, this needs the server binary built beside ours.

mod support;

use std::io::Write;
use std::process::Child;
use std::time::{Duration, Instant};

use serde_json::{json, Value};
use support::{finish, run, spawn_rookery, Api, LineFeed, Server, WAIT};

const PASSWORD: &str = "a long passphrase";

/// Signs `name` up and logs the terminal client in as them, in a
/// directory of their own; returns it with the login's API token (read
/// from the client's credentials file), for the test's own calls.
fn account(server: &Server, api: &Api, name: &str) -> (tempfile::TempDir, String) {
    api.sign_up(name, PASSWORD);
    let dir = tempfile::tempdir().expect("temporary directory");
    run(
        dir.path(),
        &["login", "--server", &server.url],
        &format!("{name}\n{PASSWORD}\n"),
    )
    .assert_ok();
    let stored =
        std::fs::read_to_string(support::config_dir(dir.path()).join("rookery/credentials.json"))
            .expect("the stored login");
    let stored: Value = serde_json::from_str(&stored).expect("JSON");
    let token = stored["logins"][0]["token"]
        .as_str()
        .expect("a token")
        .to_string();
    (dir, token)
}

fn post(api: &Api, path: &str, token: &str, body: Option<Value>) -> Value {
    let (status, answer) = api.call(reqwest::Method::POST, path, Some(token), body);
    assert_eq!(status, 200, "POST {path}: {answer}");
    answer
}

fn get(api: &Api, path: &str) -> Value {
    let (status, answer) = api.call(reqwest::Method::GET, path, None, None);
    assert_eq!(status, 200, "GET {path}: {answer}");
    answer
}

/// Polls `path` until `done` holds.
fn get_until(api: &Api, path: &str, what: &str, done: impl Fn(&Value) -> bool) -> Value {
    let deadline = Instant::now() + WAIT;
    loop {
        let value = get(api, path);
        if done(&value) {
            return value;
        }
        assert!(
            Instant::now() < deadline,
            "timed out waiting for {what}: {value}"
        );
        std::thread::sleep(Duration::from_millis(200));
    }
}

/// Types `line` into the client.
fn type_line(child: &mut Child, line: &str) {
    let stdin = child.stdin.as_mut().expect("stdin");
    writeln!(stdin, "{line}").expect("type a line");
    stdin.flush().expect("flush");
}

/// Plays game `game` between the client (`me`, typing into `child`) and
/// the opponent over the Board API (`their_token`): two moves each way
/// from the client's side (the first after `berserk` if asked), then the
/// opponent resigns.
fn win_one(api: &Api, child: &mut Child, game: &str, me: &str, their_token: &str) {
    play_one(api, child, game, me, their_token, false);
}

fn play_one(api: &Api, child: &mut Child, game: &str, me: &str, their_token: &str, berserk: bool) {
    let state = get(api, &format!("/api/games/{game}"));
    let mine_white = state["white"]["name"] == me;
    let board = |action: &str| {
        post(
            api,
            &format!("/api/board/game/{game}/{action}"),
            their_token,
            None,
        );
    };
    let plies = |n: usize| {
        get_until(api, &format!("/api/games/{game}"), "the move", |s| {
            s["moves"].as_array().map_or(0, Vec::len) >= n
        });
    };
    if mine_white {
        if berserk {
            type_line(child, "berserk");
        }
        type_line(child, "e4");
        plies(1);
        board("move/e7e5");
        type_line(child, "Nf3");
        plies(3);
    } else {
        board("move/e2e4");
        if berserk {
            type_line(child, "berserk");
        }
        type_line(child, "e5");
        plies(2);
        board("move/g1f3");
        type_line(child, "Nc6");
        plies(4);
    }
    board("resign");
}

/// A casual arena made by the holder of `token`, starting now, with a
/// clock of `clock` minutes and no increment, lasting `minutes`: its id.
fn new_arena(api: &Api, token: &str, name: &str, clock: f64, minutes: f64) -> String {
    let arena = post(
        api,
        "/api/tournament",
        token,
        Some(
            json!({"name": name, "clockTime": clock, "clockIncrement": 0,
                    "minutes": minutes, "waitMinutes": 0, "rated": false}),
        ),
    );
    arena["id"].as_str().expect("id").to_string()
}

/// The client's `paired: game ID` line.
fn paired(line: &str) -> Option<String> {
    line.strip_prefix("paired: game ").map(str::to_string)
}

#[test]
fn arena_join_plays_each_pairing_until_the_player_withdraws() {
    let server = Server::start();
    let api = Api::new(&server);
    let (ann, _) = account(&server, &api, "ann_a");
    let (bob, bob_token) = account(&server, &api, "bob_a");
    let id = new_arena(&api, &bob_token, "Terminal", 5.0, 60.0);

    let listed = run(ann.path(), &["arena", "list", "--server", &server.url], "");
    listed.assert_ok();
    let line = listed
        .stdout
        .lines()
        .find(|line| line.starts_with(&id))
        .unwrap_or_else(|| panic!("{id} not listed: {}", listed.stdout));
    for part in ["Terminal Arena", "5+0", "casual", "0 players"] {
        assert!(line.contains(part), "{part:?} not in {line:?}");
    }
    // A mistyped id: the server's word, exit 1.
    let wrong = run(
        ann.path(),
        &["arena", "join", "nosuch1", "--server", &server.url],
        "",
    );
    assert!(!wrong.status.success(), "{wrong:#?}");
    assert!(
        wrong.stderr.contains("no such tournament"),
        "{}",
        wrong.stderr
    );

    let mut client = spawn_rookery(ann.path(), &["arena", "join", &id, "--server", &server.url]);
    let mut out = LineFeed::new(client.stdout.take().expect("stdout"));
    out.wait_for("the join", |line| {
        line.starts_with("joined Terminal Arena").then_some(())
    });
    post(
        &api,
        &format!("/api/tournament/{id}/join"),
        &bob_token,
        None,
    );

    // Two games: the client follows the player from the first to the next;
    // in the first the player goes berserk before moving.
    let mut games = Vec::new();
    for n in 0..2 {
        let game = out.wait_for("a pairing", paired);
        assert!(!games.contains(&game), "{game} played twice");
        play_one(&api, &mut client, &game, "ann_a", &bob_token, n == 0);
        out.wait_for("the game's end", |line| {
            line.contains("game over:").then_some(())
        });
        out.wait_for("back in the arena", |line| {
            line.starts_with("waiting for a pairing").then_some(())
        });
        games.push(game);
    }
    // Waiting for the third: `q` withdraws.
    type_line(&mut client, "q");
    let left = finish(client, "");
    let lines = out.rest();
    assert!(left.status.success(), "{left:#?}\n{lines:#?}");
    assert!(
        lines
            .iter()
            .any(|l| l.starts_with(&format!("withdrew from arena {id}"))),
        "{lines:#?}"
    );
    let standing = get_until(&api, &format!("/api/tournament/{id}"), "the pause", |a| {
        a["standing"]["players"]
            .as_array()
            .into_iter()
            .flatten()
            .any(|p| p["name"] == "ann_a" && p["withdraw"] == true && p["score"] == 4)
    });
    let ann_line = standing["standing"]["players"]
        .as_array()
        .and_then(|players| players.iter().find(|p| p["name"] == "ann_a"))
        .cloned()
        .expect("ann's line");
    assert_eq!(ann_line["nb"]["game"], 2, "{ann_line}");
    assert_eq!(ann_line["nb"]["berserk"], 1, "{ann_line}");
    let first = get(&api, &format!("/api/games/{}", games[0]));
    let ann_colour = if first["white"]["name"] == "ann_a" {
        "white"
    } else {
        "black"
    };
    assert_eq!(first["berserk"], json!([ann_colour]), "{first}");
    assert!(
        lines
            .iter()
            .any(|l| l.starts_with("berserk: half your time")),
        "{lines:#?}"
    );
    assert_eq!(ann_line["sheet"]["scores"], "22", "{ann_line}");
    for game in &games {
        let state = get(&api, &format!("/api/games/{game}"));
        assert_eq!(state["status"], "finished", "{state}");
    }

    // `arena withdraw` from the command line.
    let withdrawn = run(
        bob.path(),
        &["arena", "withdraw", &id, "--server", &server.url],
        "",
    );
    withdrawn.assert_ok();
    assert!(
        withdrawn.stdout.starts_with("withdrew from arena"),
        "{}",
        withdrawn.stdout
    );
}

#[test]
fn swiss_join_plays_a_round_and_withdraws() {
    let server = Server::start();
    let api = Api::new(&server);
    let (cat, cat_token) = account(&server, &api, "cat_s");
    let (_dan, dan_token) = account(&server, &api, "dan_s");
    post(
        &api,
        "/api/team",
        &dan_token,
        Some(json!({"name": "Terminal Club"})),
    );
    post(
        &api,
        "/team/terminal-club/join",
        &cat_token,
        Some(json!({})),
    );
    let swiss = post(
        &api,
        "/api/swiss/new/terminal-club",
        &dan_token,
        Some(
            json!({"name": "Terminal Swiss", "clock.limit": 300, "clock.increment": 0,
                    "nbRounds": 3, "roundInterval": 99_999_999,
                    "startsAt": 4_102_444_800_000i64, "rated": false}),
        ),
    );
    let id = swiss["id"].as_str().expect("id").to_string();
    post(&api, &format!("/api/swiss/{id}/join"), &dan_token, None);

    let mut client = spawn_rookery(cat.path(), &["swiss", "join", &id, "--server", &server.url]);
    let mut out = LineFeed::new(client.stdout.take().expect("stdout"));
    out.wait_for("the join", |line| {
        line.starts_with("joined Terminal Swiss").then_some(())
    });
    post(
        &api,
        &format!("/api/swiss/{id}/schedule-next-round"),
        &dan_token,
        Some(json!({"date": 0})),
    );
    let game = out.wait_for("round 1's pairing", paired);
    win_one(&api, &mut client, &game, "cat_s", &dan_token);
    out.wait_for("back in the tournament", |line| {
        line.starts_with("waiting for a pairing (round 1 of 3")
            .then_some(())
    });
    type_line(&mut client, "withdraw");
    let left = finish(client, "");
    let lines = out.rest();
    assert!(left.status.success(), "{left:#?}\n{lines:#?}");
    let state = get(&api, &format!("/api/swiss/{id}"));
    let cat_line = state["standings"]
        .as_array()
        .and_then(|lines| lines.iter().find(|l| l["username"] == "cat_s"))
        .cloned()
        .expect("cat's line");
    assert_eq!(cat_line["points"].as_f64(), Some(1.0), "{state}");
    assert_eq!(cat_line["absent"], true, "{state}");
}

/// `arena join` stays to the arena's end: every pairing until then is
/// played, then the player's final standing is told and the client exits 0.
#[test]
fn arena_join_plays_to_the_arenas_end() {
    let server = Server::start();
    let api = Api::new(&server);
    let (eve, _) = account(&server, &api, "eve_a");
    let (_fay, fay_token) = account(&server, &api, "fay_a");
    // A 12-second arena.
    let id = new_arena(&api, &fay_token, "Sprint", 1.0, 0.2);
    post(
        &api,
        &format!("/api/tournament/{id}/join"),
        &fay_token,
        None,
    );
    let mut client = spawn_rookery(eve.path(), &["arena", "join", &id, "--server", &server.url]);
    let mut out = LineFeed::new(client.stdout.take().expect("stdout"));
    let mut won = 0;
    let last = loop {
        let line = out.wait_for("a pairing or the end", |line| {
            (line.starts_with("paired: game ") || line.starts_with("the arena is over"))
                .then(|| line.to_string())
        });
        match paired(&line) {
            Some(game) => {
                win_one(&api, &mut client, &game, "eve_a", &fay_token);
                won += 1;
            }
            None => break line,
        }
    };
    assert!(won >= 1, "no game in the arena");
    assert_eq!(
        last,
        format!(
            "the arena is over: you finished #1 of 2 with {} points",
            arena_points(won)
        )
    );
    let ended = finish(client, "");
    assert!(ended.status.success(), "{ended:#?}");
}

/// lichess's arena score of `won` wins in a row: 2, 2, then 4 on fire.
fn arena_points(won: u32) -> u32 {
    (0..won).map(|n| if n < 2 { 2 } else { 4 }).sum()
}

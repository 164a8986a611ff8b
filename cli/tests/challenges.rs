//! Challenges by name in the terminal (issue 21), against a real
//! `rookery-server`: two accounts, each logged in with its own
//! configuration directory. One challenges the other, who sees it live
//! (`challenges --watch`) and in the list, and declines it: the challenger
//! exits non-zero with the reason. A second challenge is accepted
//! (`accept ID`), and both play their seats piped, through their accounts,
//! until white resigns. Waiting can be cut short with `q` or Ctrl-C, which
//! cancels the challenge on the server; a challenge's game left early is
//! found again with `play ID`.
//!
//! Like tests/server.rs, this needs the server binary built beside ours.

mod support;

use std::path::Path;

use support::{finish, run, spawn_rookery, Api, LineFeed, Server};

const PASSWORD: &str = "a long passphrase";

/// Signs `name` up and logs the terminal client in as them, in a
/// directory (and so a configuration) of their own.
fn account(server: &Server, api: &Api, name: &str) -> tempfile::TempDir {
    api.sign_up(name, PASSWORD);
    let dir = tempfile::tempdir().expect("temporary directory");
    run(
        dir.path(),
        &["login", "--server", &server.url],
        &format!("{name}\n{PASSWORD}\n"),
    )
    .assert_ok();
    dir
}

/// `rookery ARGS --server URL`.
fn on<'a>(server: &'a Server, args: &[&'a str]) -> Vec<&'a str> {
    let mut all = args.to_vec();
    all.extend(["--server", server.url.as_str()]);
    all
}

/// The challenge's id from its first line, `challenge ID to NAME ...`.
fn challenge_id(line: &str) -> Option<String> {
    let rest = line.strip_prefix("challenge ")?;
    rest.split_whitespace().next().map(str::to_string)
}

fn listed(dir: &Path, server: &Server) -> String {
    let list = run(dir, &on(server, &["challenges"]), "");
    list.assert_ok();
    list.stdout
}

#[test]
fn a_challenge_declined_then_one_accepted_and_played() {
    let server = Server::start();
    let api = Api::new(&server);
    let alice = account(&server, &api, "alice_c");
    let bob = account(&server, &api, "bob_c");

    // Bob watches before any challenge is made: what comes is told live.
    let mut watch = spawn_rookery(bob.path(), &on(&server, &["challenges", "--watch"]));
    let mut watched = LineFeed::new(watch.stdout.take().expect("stdout"));
    watched.wait_for("the watch to start", |line| {
        line.starts_with("watching for challenges").then_some(())
    });
    assert!(
        watched.seen.iter().any(|line| line == "no open challenges"),
        "{:#?}",
        watched.seen
    );

    // A name nobody has: the server's message (lichess's flat error).
    let unknown = run(
        alice.path(),
        &on(&server, &["challenge", "nobody_here"]),
        "",
    );
    assert!(!unknown.status.success(), "{unknown:#?}");
    assert!(
        unknown.stderr.contains("no such user: nobody_here"),
        "{}",
        unknown.stderr
    );

    let mut first = spawn_rookery(
        alice.path(),
        &on(
            &server,
            &["challenge", "bob_c", "--clock", "5+0", "--color", "white"],
        ),
    );
    let mut first_out = LineFeed::new(first.stdout.take().expect("stdout"));
    let made = first_out.wait_for("the challenge", |line| {
        line.starts_with("challenge ").then(|| line.to_string())
    });
    let id = challenge_id(&made).expect("an id");
    assert!(
        made.contains("to bob_c") && made.contains("5+0") && made.contains("you play white"),
        "{made}"
    );
    first_out.wait_for("the wait", |line| {
        line.starts_with("waiting for bob_c to answer")
            .then_some(())
    });

    let live = watched.wait_for("the challenge told live", |line| {
        line.starts_with(&id).then(|| line.to_string())
    });
    for part in ["from alice_c", "5+0 blitz", "casual", "you play black"] {
        assert!(live.contains(part), "{part:?} not in {live:?}");
    }
    let list = listed(bob.path(), &server);
    let line = list
        .lines()
        .find(|line| line.starts_with(&id))
        .unwrap_or_else(|| panic!("{id} not listed for bob: {list}"));
    assert!(line.contains("from alice_c"), "{line}");
    let theirs = listed(alice.path(), &server);
    assert!(
        theirs
            .lines()
            .any(|l| l.starts_with(&id) && l.contains("to bob_c")),
        "{theirs}"
    );

    run(
        bob.path(),
        &on(&server, &["decline", &id, "--reason", "later"]),
        "",
    )
    .assert_ok();
    // The challenger's stdin ends at once: a piped script's end does not
    // stop the wait.
    let declined = finish(first, "");
    assert!(!declined.status.success(), "{declined:#?}");
    assert!(
        declined
            .stderr
            .contains("bob_c declined: This is not the right time for me, please ask again later."),
        "{}",
        declined.stderr
    );
    watched.wait_for("the decline told", |line| {
        (line.starts_with(&id) && line.contains("declined by bob_c")).then_some(())
    });

    // The second one is accepted. Alice's script is written before the
    // answer: her first move waits for the game.
    let mut second = spawn_rookery(
        alice.path(),
        &on(
            &server,
            &["challenge", "bob_c", "--clock", "5+0", "--color", "white"],
        ),
    );
    let mut second_out = LineFeed::new(second.stdout.take().expect("stdout"));
    let game = second_out.wait_for("the second challenge", challenge_id);
    assert_ne!(game, id);
    let alice_plays = std::thread::spawn(move || {
        let run = finish(second, "e4\nNf3\nresign\n");
        (run, second_out.rest())
    });
    // Bob's `board` waits for his turn or the end: white's resignation.
    let bob_run = run(
        bob.path(),
        &on(&server, &["accept", &game]),
        "e5\nNc6\nboard\n",
    );
    let (alice_run, alice_lines) = alice_plays.join().expect("alice's script");
    bob_run.assert_ok();
    assert!(
        alice_run.status.success(),
        "{alice_run:#?}\n{alice_lines:#?}"
    );
    let alice_text = alice_lines.join("\n");
    assert!(
        alice_text.contains(&format!("bob_c accepted: game {game}")),
        "{alice_text}"
    );
    assert!(
        bob_run
            .stdout
            .contains(&format!("accepted the challenge from alice_c: game {game}")),
        "{}",
        bob_run.stdout
    );
    for (who, text, color) in [
        ("alice", &alice_text, "white"),
        ("bob", &bob_run.stdout, "black"),
    ] {
        for line in [
            &format!("you play {color}"),
            "1. e4",
            "1... e5",
            "2. Nf3",
            "2... Nc6",
            "game over: 0-1 (resignation)",
        ] {
            assert!(
                text.contains(line),
                "{who} did not report {line:?}:\n{text}"
            );
        }
    }
    watched.wait_for("the acceptance told", |line| {
        (line.starts_with(&game) && line.contains("accepted")).then_some(())
    });
    let _ = watch.kill();
    let _ = watch.wait();

    // The game is the two accounts', as the challenge said.
    let (status, state) = api.call(
        reqwest::Method::GET,
        &format!("/api/games/{game}"),
        None,
        None,
    );
    assert_eq!(status, 200, "{state}");
    assert_eq!(state["status"], "finished");
    assert_eq!(state["result"], "0-1");
    assert_eq!(state["white"]["name"], "alice_c");
    assert_eq!(state["black"]["name"], "bob_c");
    assert_eq!(state["moves"].as_array().map(Vec::len), Some(4), "{state}");
}

#[test]
fn q_or_ctrl_c_cancels_the_wait_and_play_finds_the_accounts_seat() {
    let server = Server::start();
    let api = Api::new(&server);
    let alice = account(&server, &api, "alice_q");
    let bob = account(&server, &api, "bob_q");

    // Not logged in: said how to.
    let stranger = tempfile::tempdir().expect("temporary directory");
    let refused = run(stranger.path(), &on(&server, &["challenges"]), "");
    assert!(!refused.status.success(), "{refused:#?}");
    assert!(
        refused.stderr.contains("not logged in"),
        "{}",
        refused.stderr
    );

    // `q` as a script's first line.
    let quit = run(alice.path(), &on(&server, &["challenge", "bob_q"]), "q\n");
    assert!(!quit.status.success(), "{quit:#?}");
    assert!(quit.stderr.contains("canceled"), "{}", quit.stderr);
    assert!(
        quit.stdout.contains("5+3 blitz"),
        "the default clock: {}",
        quit.stdout
    );

    // Ctrl-C while waiting.
    let mut waiting = spawn_rookery(
        alice.path(),
        &on(&server, &["challenge", "bob_q", "--untimed", "--rated"]),
    );
    let mut out = LineFeed::new(waiting.stdout.take().expect("stdout"));
    let made = out.wait_for("the challenge", |line| {
        line.starts_with("challenge ").then(|| line.to_string())
    });
    assert!(made.contains("untimed  rated"), "{made}");
    out.wait_for("the wait", |line| {
        line.starts_with("waiting for").then_some(())
    });
    let pid = libc::pid_t::try_from(waiting.id()).expect("a pid");
    // SAFETY: signals our own child, still running (it waits for an answer).
    assert_eq!(unsafe { libc::kill(pid, libc::SIGINT) }, 0);
    let interrupted = finish(waiting, "");
    assert!(!interrupted.status.success(), "{interrupted:#?}");
    assert!(
        interrupted.stderr.contains("canceled"),
        "{}",
        interrupted.stderr
    );

    // Nothing is left open on either side.
    assert_eq!(listed(bob.path(), &server), "no open challenges\n");
    assert_eq!(listed(alice.path(), &server), "no open challenges\n");

    // Both leave an accepted game at once (their scripts are empty)...
    let mut third = spawn_rookery(
        alice.path(),
        &on(&server, &["challenge", "bob_q", "--color", "white"]),
    );
    let mut third_out = LineFeed::new(third.stdout.take().expect("stdout"));
    let game = third_out.wait_for("the challenge", challenge_id);
    let alice_leaves = std::thread::spawn(move || (finish(third, ""), third_out.rest()));
    run(bob.path(), &on(&server, &["accept", &game]), "").assert_ok();
    let (left, left_lines) = alice_leaves.join().expect("alice's run");
    assert!(left.status.success(), "{left:#?}\n{left_lines:#?}");
    assert!(
        left_lines.contains(&format!("bob_q accepted: game {game}")),
        "{left_lines:#?}"
    );
    // ... and `play ID` takes alice back to her account's seat.
    let back = run(alice.path(), &on(&server, &["play", &game]), "abort\n");
    back.assert_ok();
    for line in ["you play white", "game over: * (aborted)"] {
        assert!(back.stdout.contains(line), "{line:?}: {}", back.stdout);
    }
}

/// `challenge NAME --chess960 --chess960-start 500`: the challenge says
/// Chess960 on both sides, the game starts from start 500, and its
/// castling is played from the accounts' seats (`O-O` with the king on
/// f1 is sent king takes rook).
#[test]
fn a_chess960_challenge_is_played_from_its_start() {
    let server = Server::start();
    let api = Api::new(&server);
    let alice = account(&server, &api, "alice_9");
    let bob = account(&server, &api, "bob_9");
    let bad = run(
        alice.path(),
        &on(&server, &["challenge", "bob_9", "--chess960-start", "3"]),
        "",
    );
    assert!(!bad.status.success(), "--chess960-start needs --chess960");
    let mut made = spawn_rookery(
        alice.path(),
        &on(
            &server,
            &[
                "challenge",
                "bob_9",
                "--chess960",
                "--chess960-start",
                "500",
                "--color",
                "white",
            ],
        ),
    );
    let mut made_out = LineFeed::new(made.stdout.take().expect("stdout"));
    let line = made_out.wait_for("the challenge", |line| {
        line.starts_with("challenge ").then(|| line.to_string())
    });
    assert!(line.contains("5+3 blitz  Chess960  casual"), "{line}");
    let game = challenge_id(&line).expect("an id");
    let incoming = listed(bob.path(), &server);
    assert!(
        incoming
            .lines()
            .any(|l| l.starts_with(&game) && l.contains("Chess960")),
        "{incoming}"
    );
    let alice_plays = std::thread::spawn(move || {
        let run = finish(made, "Ngf3\nO-O\nresign\n");
        (run, made_out.rest())
    });
    let bob_run = run(
        bob.path(),
        &on(&server, &["accept", &game]),
        "Ngf6\nKg8\nboard\n",
    );
    let (alice_run, alice_lines) = alice_plays.join().expect("alice's script");
    bob_run.assert_ok();
    assert!(alice_run.status.success(), "{alice_lines:#?}");
    let (status, state) = api.call(
        reqwest::Method::GET,
        &format!("/api/games/{game}"),
        None,
        None,
    );
    assert_eq!(status, 200, "{state}");
    assert_eq!(state["variant"], "chess960");
    assert_eq!(
        state["initial_fen"],
        "rbbqnknr/pppppppp/8/8/8/8/PPPPPPPP/RBBQNKNR w KQkq - 0 1"
    );
    assert_eq!(
        state["san"],
        serde_json::json!(["Ngf3", "Ngf6", "O-O", "Kg8"])
    );
    assert_eq!(state["moves"][2], "f1h1", "{state}");
    assert_eq!(state["result"], "0-1");
}

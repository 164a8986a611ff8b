//! Online mode against the real `rookery-server` binary on port 0 with a
//! temporary SQLite file: two `rookery` clients play each other while a
//! third watches; the computer answers over the server; `games` lists; bad
//! game references fail clearly.
//!
//! The server binary comes from the same workspace: `cargo test --workspace`
//! (what CI runs) builds every binary first; when testing this package
//! alone, build it with `cargo build -p rookery-server`.

mod support;

use std::io::Write;
use std::process::Child;

use support::{check_pgn, finish, run, spawn_rookery, LineFeed, Run, Server, WAIT};

#[test]
fn two_clients_play_while_a_third_watches() {
    let server = Server::start();
    let dir = tempfile::tempdir().expect("temporary directory");

    // White creates the game, with a clock, and shares its URL; its script
    // plays Fool's mate from the losing side, then shows the board.
    let mut white = spawn_rookery(
        dir.path(),
        &[
            "play",
            "--server",
            &server.url,
            "--color",
            "white",
            "--clock",
            "5+0",
        ],
    );
    let mut white_out = LineFeed::new(white.stdout.take().expect("stdout"));
    let link = white_out.wait_for("the game link", |line| {
        line.strip_prefix("game: ").map(str::to_string)
    });
    assert!(
        link.starts_with(&format!("{}/games/", server.url)),
        "{link}"
    );
    // A friend game is private: its link carries the invite secret in the
    // fragment, and the id alone does not take the seat.
    let (page, invite) = link.split_once("#invite=").expect("an invite in the link");
    assert!(!invite.is_empty(), "{link}");
    let id = page.rsplit('/').next().expect("id").to_string();
    let refused = run(dir.path(), &["play", "--server", &server.url, &id], "");
    assert!(!refused.status.success(), "{}", refused.stdout);
    assert!(refused.stderr.contains("invite"), "{}", refused.stderr);

    // A private game is not listed (only its link finds it).
    let listed = run(dir.path(), &["games", "--server", &server.url], "");
    listed.assert_ok();
    assert!(!listed.stdout.contains(&id), "{}", listed.stdout);

    let watcher = spawn_rookery(dir.path(), &["watch", "--server", &server.url, &id]);
    // Black joins by the link alone: the server comes from the URL.
    let black = spawn_rookery(dir.path(), &["play", &link]);

    let white_script = std::thread::spawn(move || {
        let run = finish(white, "f3\ng4\nsave white.pgn\nboard\n");
        (run.status, white_out.rest())
    });
    let black_run = finish(black, "e5\nQh4#\nsave black.pgn\n");
    let watcher_run = finish(watcher, "");
    let (white_status, white_lines) = white_script.join().expect("white's script");

    black_run.assert_ok();
    watcher_run.assert_ok();
    assert!(white_status.success(), "white failed: {white_lines:#?}");

    let moves = [
        "1. f3",
        "1... e5",
        "2. g4",
        "2... Qh4#",
        "game over: 0-1 (checkmate)",
    ];
    let white_text = white_lines.join("\n");
    for (who, text) in [
        ("white", white_text.as_str()),
        ("black", black_run.stdout.as_str()),
        ("watcher", watcher_run.stdout.as_str()),
    ] {
        let mut from = 0;
        for line in moves {
            match text[from..].find(line) {
                Some(at) => from += at + line.len(),
                None => panic!("{who} did not report {line:?} in order:\n{text}"),
            }
        }
    }
    assert!(white_text.contains("you play white"), "{white_text}");
    assert!(
        black_run.stdout.contains("you play black"),
        "{}",
        black_run.stdout
    );
    assert!(
        watcher_run.stdout.contains("watching"),
        "{}",
        watcher_run.stdout
    );
    // The game has a clock, shown with the board.
    assert!(
        white_lines
            .iter()
            .any(|l| l.starts_with("clock: white ") && l.contains(", black ")),
        "{white_text}"
    );

    for file in ["white.pgn", "black.pgn"] {
        let (sans, result) = check_pgn(&dir.path().join(file));
        assert_eq!(sans, ["f3", "e5", "g4", "Qh4#"], "{file}");
        assert_eq!(result, "0-1", "{file}");
    }

    // Nothing is live any more.
    let listed = run(dir.path(), &["games", "--server", &server.url], "");
    listed.assert_ok();
    assert_eq!(listed.stdout, "no live games\n");
}

/// A Chess960 game made with `--chess960 --chess960-start 500` (issue
/// 40; ported from the `chess960` branch): the king on f1 castles with
/// `O-O` (sent king takes rook, f1h1, since f1g1 is also the king's step)
/// and black's `Kg8` stays a king step; both PGNs carry the variant.
#[test]
fn a_chess960_game_castles_online() {
    let server = Server::start();
    let dir = tempfile::tempdir().expect("temporary directory");
    let mut white = spawn_rookery(
        dir.path(),
        &[
            "play",
            "--server",
            &server.url,
            "--chess960",
            "--chess960-start",
            "500",
        ],
    );
    let mut white_out = LineFeed::new(white.stdout.take().expect("stdout"));
    let link = white_out.wait_for("the game link", |line| {
        line.strip_prefix("game: ").map(str::to_string)
    });
    let black = spawn_rookery(dir.path(), &["play", &link]);
    let white_script = std::thread::spawn(move || {
        let run = finish(white, "Ngf3\nO-O\nresign\n");
        (run.status, white_out.rest())
    });
    // Each client acts on its turn and stays to the game's end: white
    // resigns after Kg8, then black saves.
    let black_run = finish(black, "Ngf6\nKg8\nsave black.pgn\n");
    let (white_status, white_lines) = white_script.join().expect("white's script");
    black_run.assert_ok();
    assert!(white_status.success(), "white failed: {white_lines:#?}");
    let (sans, _) = check_pgn(&dir.path().join("black.pgn"));
    assert_eq!(sans, ["Ngf3", "Ngf6", "O-O", "Kg8"]);
    let pgn = std::fs::read_to_string(dir.path().join("black.pgn")).expect("black.pgn");
    assert!(pgn.contains("[Variant \"Chess960\"]"), "{pgn}");
    assert!(
        pgn.contains("[FEN \"rbbqnknr/pppppppp/8/8/8/8/PPPPPPPP/RBBQNKNR w KQkq - 0 1\"]"),
        "{pgn}"
    );
}

/// `rookery play` against the server's level 1 as white, fed `input`.
fn against_level_1_as_white(dir: &std::path::Path, server: &Server, input: &str) -> Run {
    run(
        dir,
        &[
            "play",
            "--server",
            &server.url,
            "--level",
            "1",
            "--color",
            "white",
        ],
        input,
    )
}

#[test]
fn the_servers_computer_answers_live() {
    let server = Server::start();
    let dir = tempfile::tempdir().expect("temporary directory");
    let out = against_level_1_as_white(dir.path(), &server, "e4\nsave ai.pgn\n");
    out.assert_ok();
    assert!(out.stdout.contains("1. e4\n1... "), "{}", out.stdout);
    let (sans, _) = check_pgn(&dir.path().join("ai.pgn"));
    assert_eq!(sans.len(), 2, "{sans:?}");
    assert_eq!(sans[0], "e4");
}

#[test]
fn refused_online_actions_are_explained() {
    let server = Server::start();
    let dir = tempfile::tempdir().expect("temporary directory");
    // A computer game: both seats are settled at once, so nobody can join.
    let mut creator = spawn_rookery(
        dir.path(),
        &[
            "play",
            "--server",
            &server.url,
            "--level",
            "1",
            "--color",
            "black",
        ],
    );
    let mut creator_out = LineFeed::new(creator.stdout.take().expect("stdout"));
    let link = creator_out.wait_for("the game link", |line| {
        line.strip_prefix("game: ").map(str::to_string)
    });

    let cases: [(&[&str], &str); 4] = [
        (&["play", &link], "no free seat"),
        (
            &[
                "play",
                "--server",
                &server.url,
                "00000000-0000-0000-0000-000000000000",
            ],
            "not_found",
        ),
        (&["watch", "--server", &server.url, "nope"], "nope"),
        (&["play", "some-id"], "which server?"),
    ];
    for (args, reason) in cases {
        let out = run(dir.path(), args, "");
        assert!(!out.status.success(), "{args:?} should fail: {out:#?}");
        assert!(out.stderr.contains(reason), "{args:?}: {}", out.stderr);
    }

    // Online, undo asks for a takeback, which needs a move of one's own;
    // spectators cannot move. The watcher stays until the game ends, which
    // the creator's resignation does.
    let id = link
        .split('#')
        .next()
        .and_then(|page| page.rsplit('/').next())
        .expect("id");
    let watcher = spawn_rookery(dir.path(), &["watch", "--server", &server.url, id]);
    let creator_run = finish(creator, "undo\nload x.pgn\nresign\n");
    let watcher_run = finish(watcher, "e4\nundo\nrematch\n");
    creator_run.assert_ok();
    watcher_run.assert_ok();
    for expected in ["(nothing_to_take_back)", "load is for local games"] {
        assert!(
            creator_run.stderr.contains(expected),
            "{}",
            creator_run.stderr
        );
    }
    for expected in ["spectators cannot move", "spectators cannot do that"] {
        assert!(
            watcher_run.stderr.contains(expected),
            "{}",
            watcher_run.stderr
        );
    }
    let creator_lines = creator_out.rest().join("\n");
    assert!(
        creator_lines.contains("game over: 1-0 (resignation)"),
        "{creator_lines}"
    );
    assert!(
        watcher_run.stdout.contains("game over: 1-0 (resignation)"),
        "{}",
        watcher_run.stdout
    );
}

#[test]
fn players_reconnect_after_the_server_restarts() {
    let mut server = Server::start();
    let dir = tempfile::tempdir().expect("temporary directory");
    let mut white = spawn_rookery(dir.path(), &["play", "--server", &server.url]);
    let mut white_in = white.stdin.take().expect("stdin");
    let mut white_out = LineFeed::new(white.stdout.take().expect("stdout"));
    let mut white_err = LineFeed::new(white.stderr.take().expect("stderr"));
    let link = white_out.wait_for("the game link", |line| {
        line.strip_prefix("game: ").map(str::to_string)
    });
    let mut black = spawn_rookery(dir.path(), &["play", &link]);
    let mut black_in = black.stdin.take().expect("stdin");
    let mut black_out = LineFeed::new(black.stdout.take().expect("stdout"));
    let mut black_err = LineFeed::new(black.stderr.take().expect("stderr"));

    writeln!(white_in, "e4").expect("type");
    writeln!(black_in, "e5").expect("type");
    white_out.wait_for("black's reply", |l| (l == "1... e5").then_some(()));

    server.crash_and_restart();
    white_err.wait_for("the lost connection", |l| {
        l.contains("reconnecting").then_some(())
    });
    white_out.wait_for("the reconnection", |l| (l == "reconnected").then_some(()));
    black_out.wait_for("the reconnection", |l| (l == "reconnected").then_some(()));

    // The game goes on where it was. (White resigns at the end so that
    // Black's last line, which waits for Black's turn or the end, is read.)
    writeln!(white_in, "d4\nsave white.pgn\nresign").expect("type");
    writeln!(black_in, "d5\nsave black.pgn").expect("type");
    drop(white_in);
    drop(black_in);
    // Waiting here (rather than in `finish`) shows what both saw if not.
    let ended = black_out
        .poll_for(|l| (l == "2... d5").then_some(()))
        .and_then(|()| white_out.poll_for(|l| l.contains("game over").then_some(())));
    assert!(
        ended.is_some(),
        "the game did not go on to its end:\nwhite {:#?}\n{:#?}\nblack {:#?}\n{:#?}",
        white_out.so_far(),
        white_err.so_far(),
        black_out.so_far(),
        black_err.so_far()
    );
    let white_run = finish(white, "");
    let black_run = finish(black, "");
    assert!(white_run.status.success(), "{:#?}", white_out.rest());
    assert!(black_run.status.success(), "{:#?}", black_out.rest());
    for file in ["white.pgn", "black.pgn"] {
        let (sans, _) = check_pgn(&dir.path().join(file));
        assert_eq!(sans, ["e4", "e5", "d4", "d5"], "{file}");
    }
}

/// A friend's link may carry an invite secret (`?invite=`): joining sends it
/// in the join body. A one-shot fake server records what arrives.
#[test]
fn joining_by_link_passes_the_invite_along() {
    use std::io::Read;
    use std::net::TcpListener;

    let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
    let port = listener.local_addr().expect("address").port();
    let fake = std::thread::spawn(move || {
        let (mut stream, _) = listener.accept().expect("accept");
        stream.set_read_timeout(Some(WAIT)).expect("read timeout");
        let mut request = Vec::new();
        let mut buf = [0u8; 1024];
        // Read the head, then as many body bytes as it announces.
        let (head_len, body_len) = loop {
            let n = stream.read(&mut buf).expect("read the request");
            assert!(n > 0, "connection closed early");
            request.extend_from_slice(&buf[..n]);
            if let Some(end) = request.windows(4).position(|w| w == b"\r\n\r\n") {
                let head = String::from_utf8_lossy(&request[..end]).to_ascii_lowercase();
                let length = head
                    .lines()
                    .find_map(|l| l.strip_prefix("content-length:"))
                    .and_then(|v| v.trim().parse::<usize>().ok())
                    .unwrap_or(0);
                break (end + 4, length);
            }
        };
        while request.len() < head_len + body_len {
            let n = stream.read(&mut buf).expect("read the body");
            assert!(n > 0, "connection closed early");
            request.extend_from_slice(&buf[..n]);
        }
        let body = r#"{"error":{"code":"not_found","message":"no such game"}}"#;
        let response = format!(
            "HTTP/1.1 404 Not Found\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
            body.len()
        );
        stream.write_all(response.as_bytes()).expect("answer");
        String::from_utf8_lossy(&request).into_owned()
    });
    let dir = tempfile::tempdir().expect("temporary directory");
    let link = format!("http://127.0.0.1:{port}/games/abc?invite=s3cret");
    let out = run(dir.path(), &["play", &link], "");
    let request = fake.join().expect("the fake server");
    assert!(!out.status.success());
    assert!(
        out.stderr.contains("no such game (not_found)"),
        "{}",
        out.stderr
    );
    assert!(
        request.starts_with("POST /api/games/abc/join "),
        "{request}"
    );
    let body = &request[request.find("\r\n\r\n").expect("head end") + 4..];
    let body: serde_json::Value = serde_json::from_str(body).expect("a JSON body");
    assert_eq!(body, serde_json::json!({"invite": "s3cret"}));
}

/// `rookery play --server URL EXTRA…`, which creates a game online: the
/// child, its stdout followed line by line, and the game link it prints.
fn host(dir: &std::path::Path, server: &Server, extra: &[&str]) -> (Child, LineFeed, String) {
    let mut args = vec!["play", "--server", server.url.as_str()];
    args.extend_from_slice(extra);
    let mut child = spawn_rookery(dir, &args);
    let mut out = LineFeed::new(child.stdout.take().expect("stdout"));
    let link = out.wait_for("the game link", |line| {
        line.strip_prefix("game: ").map(str::to_string)
    });
    (child, out, link)
}

/// Runs the host's script and the joiner's at once (each waits for its
/// turn); both must end well. The host's whole output and the joiner's run.
fn both_play(
    host: (Child, LineFeed),
    host_input: &str,
    joiner: Child,
    joiner_input: &str,
) -> (String, Run) {
    let (child, mut out) = host;
    let input = host_input.to_string();
    let host_script = std::thread::spawn(move || {
        let run = finish(child, &input);
        (run, out.rest().join("\n"))
    });
    let joiner_run = finish(joiner, joiner_input);
    let (host_run, host_text) = host_script.join().expect("the host's script");
    host_run.assert_ok();
    joiner_run.assert_ok();
    (host_text, joiner_run)
}

#[test]
fn a_draw_offered_online_is_seen_and_accepted() {
    let server = Server::start();
    let dir = tempfile::tempdir().expect("temporary directory");
    let (white, white_out, link) = host(dir.path(), &server, &[]);
    let black = spawn_rookery(dir.path(), &["play", &link]);
    // White offers, then moves (an offer stands while its maker moves);
    // Black accepts instead of moving.
    let (white_text, black_run) = both_play(
        (white, white_out),
        "draw\ne4\nsave white.pgn\n",
        black,
        "draw\nsave black.pgn\n",
    );
    assert!(
        white_text.contains("your draw offer stands"),
        "{white_text}"
    );
    assert!(
        black_run
            .stdout
            .contains("white offers a draw: type draw to accept, or decline"),
        "{}",
        black_run.stdout
    );
    for text in [&white_text, &black_run.stdout] {
        assert!(text.contains("game over: 1/2-1/2 (agreement)"), "{text}");
    }
    let (sans, result) = check_pgn(&dir.path().join("black.pgn"));
    assert_eq!(sans, ["e4"]);
    assert_eq!(result, "1/2-1/2");
}

#[test]
fn a_takeback_and_a_rematch_against_the_computer() {
    let server = Server::start();
    let dir = tempfile::tempdir().expect("temporary directory");
    // The computer grants the takeback at once (e4 and its reply go), then
    // a rematch starts at once too, with the colours swapped: the session
    // moves to the new game and plays on as black there.
    let out = against_level_1_as_white(
        dir.path(),
        &server,
        "e4\ntakeback\nd4\nresign\nsave first.pgn\nrematch\nresign\nsave second.pgn\n",
    );
    out.assert_ok();
    for expected in [
        "moves taken back",
        "rematch agreed: game ",
        "you play black",
    ] {
        assert!(out.stdout.contains(expected), "{expected}: {}", out.stdout);
    }
    let first = dir.path().join("first.pgn");
    let (sans, result) = check_pgn(&first);
    assert_eq!(sans.len(), 2, "{sans:?}");
    assert_eq!(sans[0], "d4");
    assert_eq!(result, "0-1");
    let text = std::fs::read_to_string(&first).expect("first.pgn");
    assert!(text.contains("[Takebacks \"1\"]"), "{text}");

    // The rematch: the computer is white now and moved first; black resigned.
    let second = dir.path().join("second.pgn");
    let (sans, result) = check_pgn(&second);
    assert_eq!(sans.len(), 1, "{sans:?}");
    assert_eq!(result, "1-0");
    let text = std::fs::read_to_string(&second).expect("second.pgn");
    assert!(text.contains("[White \"Rookery level 1"), "{text}");
}

#[test]
fn offers_online_are_withdrawn_and_declined_and_a_game_is_aborted() {
    let server = Server::start();
    let dir = tempfile::tempdir().expect("temporary directory");
    // White offers a draw, withdraws it, offers again and moves; black
    // declines the offer that still stands, and answers. (A script's line
    // waits for its player's turn, so white, who moves next, saves.)
    let (white, white_out, link) = host(dir.path(), &server, &["--color", "white"]);
    let black = spawn_rookery(dir.path(), &["play", &link]);
    let (white_text, black_run) = both_play(
        (white, white_out),
        "draw\nwithdraw\ndraw\ne4\nsave offers.pgn\n",
        black,
        "decline\ne5\n",
    );
    for expected in ["your draw offer stands", "the draw offer is gone"] {
        assert!(white_text.contains(expected), "{expected}: {white_text}");
    }
    assert!(
        black_run
            .stdout
            .contains("white offers a draw: type draw to accept, or decline"),
        "{}",
        black_run.stdout
    );
    let (sans, result) = check_pgn(&dir.path().join("offers.pgn"));
    assert_eq!(sans, ["e4", "e5"]);
    assert_eq!(result, "*");

    // A game nobody has moved in is aborted: no result. Nothing is left
    // to decline afterwards.
    let (white, white_out, link) = host(dir.path(), &server, &["--color", "white"]);
    let black = spawn_rookery(dir.path(), &["play", &link]);
    let white_run = finish(white, "abort\n");
    let black_run = finish(black, "decline\nsave aborted.pgn\n");
    white_run.assert_ok();
    black_run.assert_ok();
    drop(white_out);
    assert!(
        black_run.stdout.contains("game over: * (aborted)"),
        "{}",
        black_run.stdout
    );
    assert!(
        black_run.stderr.contains("there is no offer to decline"),
        "{}",
        black_run.stderr
    );
    let (sans, result) = check_pgn(&dir.path().join("aborted.pgn"));
    assert!(sans.is_empty(), "{sans:?}");
    assert_eq!(result, "*");
}

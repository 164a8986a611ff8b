//! Local play driven through piped stdin, as a script would: moves, pick and
//! place, info, undo, save and load, and refused input that changes nothing.

mod support;

use support::{check_pgn, run};

fn tempdir() -> tempfile::TempDir {
    tempfile::tempdir().expect("temporary directory")
}

#[test]
fn the_issue_example_plays_one_move_and_saves_readable_pgn() {
    let dir = tempdir();
    let out = run(
        dir.path(),
        &["play", "--level", "1", "--color", "white"],
        "e4\nsave game.pgn\nquit\n",
    );
    out.assert_ok();
    let (moves, result) = check_pgn(&dir.path().join("game.pgn"));
    assert_eq!(moves.len(), 2, "my move and the engine's answer: {moves:?}");
    assert_eq!(moves[0], "e4");
    assert_eq!(result, "*");
    assert_eq!(out.stdout.lines().next(), Some("1. e4"), "{}", out.stdout);
    assert!(out.stdout.contains(&format!("1... {}", moves[1])));
    // A pipe gets no prompt and no escape codes.
    assert!(!out.stdout.contains("rookery>"), "{}", out.stdout);
    assert!(!out.stdout.contains('\u{1b}'), "{}", out.stdout);
    assert_eq!(out.stderr, "");
}

#[test]
fn the_engine_plays_white_when_asked_to() {
    let dir = tempdir();
    let out = run(
        dir.path(),
        &["play", "--level", "1", "--color", "black", "--ascii"],
        "save g.pgn\n",
    );
    out.assert_ok();
    let (moves, _) = check_pgn(&dir.path().join("g.pgn"));
    assert_eq!(moves.len(), 1, "the engine opened: {moves:?}");
}

#[test]
fn pick_place_info_undo_save_load_round_trip() {
    let dir = tempdir();
    let script = "\
pick e2
place e2
pick e2
place e4
info e4
pick e7
place e5
Nf3
info f3
undo
info e4
save first.pgn
load first.pgn
info e4
info e5
g1f3
save second.pgn
";
    let out = run(dir.path(), &["play", "--human"], script);
    out.assert_ok();
    assert_eq!(out.stderr, "");
    let stdout = &out.stdout;
    for expected in [
        "picked pawn on e2: 2 legal moves",
        "put back on e2",
        "1. e4",
        "e4: white pawn, moved 1 time (started on e2)",
        "1... e5",
        "2. Nf3",
        "f3: white knight, moved 1 time (started on g1)",
        "took back 1 move",
        "saved first.pgn",
        "loaded first.pgn (2 moves)",
        "e5: black pawn, moved 1 time (started on e7)",
        "saved second.pgn",
    ] {
        assert!(
            stdout.contains(expected),
            "missing {expected:?} in:\n{stdout}"
        );
    }
    // The board printed on pick marks the picked pawn and its targets.
    assert!(stdout.contains("[♙]"), "{stdout}");
    assert!(stdout.contains(" * "), "{stdout}");
    let (first, _) = check_pgn(&dir.path().join("first.pgn"));
    assert_eq!(first, ["e4", "e5"]);
    let (second, _) = check_pgn(&dir.path().join("second.pgn"));
    assert_eq!(second, ["e4", "e5", "Nf3"]);
}

#[test]
fn continue_from_pgn_and_start_from_fen() {
    let dir = tempdir();
    std::fs::write(dir.path().join("start.pgn"), "1. e4 *\n").expect("write");
    let out = run(
        dir.path(),
        &[
            "play",
            "--pgn",
            "start.pgn",
            "--color",
            "black",
            "--level",
            "1",
        ],
        "e5\nsave next.pgn\n",
    );
    out.assert_ok();
    let (moves, _) = check_pgn(&dir.path().join("next.pgn"));
    assert_eq!(&moves[..2], ["e4", "e5"]);
    assert_eq!(moves.len(), 3, "the engine answered: {moves:?}");

    // Mate in one from a set-up position: the game ends and the PGN says so.
    let out = run(
        dir.path(),
        &[
            "play",
            "--human",
            "--fen",
            "6k1/5ppp/8/8/8/8/8/R5K1 w - - 0 1",
        ],
        "Ra8#\nsave mate.pgn\nRa7\n",
    );
    out.assert_ok();
    assert!(
        out.stdout
            .contains("game over: 1-0 (checkmate, white wins)"),
        "{}",
        out.stdout
    );
    assert!(out.stderr.contains("the game is over"), "{}", out.stderr);
    let (moves, result) = check_pgn(&dir.path().join("mate.pgn"));
    assert_eq!(moves, ["Ra8#"]);
    assert_eq!(result, "1-0");
    let text = std::fs::read_to_string(dir.path().join("mate.pgn")).expect("read");
    assert!(
        text.contains("[FEN \"6k1/5ppp/8/8/8/8/8/R5K1 w - - 0 1\"]"),
        "{text}"
    );
}

#[test]
fn resignation_and_agreed_draws() {
    let dir = tempdir();
    let out = run(dir.path(), &["play", "--human"], "e4\nresign\nsave r.pgn\n");
    out.assert_ok();
    assert!(
        out.stdout.contains("game over: 1-0 (black resigns)"),
        "{}",
        out.stdout
    );
    assert_eq!(check_pgn(&dir.path().join("r.pgn")).1, "1-0");

    // White offers and moves; Black accepts.
    let out = run(
        dir.path(),
        &["play", "--human"],
        "draw\ne4\ndraw\nsave d.pgn\n",
    );
    out.assert_ok();
    assert!(out.stdout.contains("white offers a draw"), "{}", out.stdout);
    assert!(
        out.stdout.contains("game over: 1/2-1/2 (draw agreed)"),
        "{}",
        out.stdout
    );
    assert_eq!(check_pgn(&dir.path().join("d.pgn")).1, "1/2-1/2");

    // A move by the other side declines the offer.
    let out = run(dir.path(), &["play", "--human"], "draw\ne4\ne5\ndraw\n");
    out.assert_ok();
    assert!(out.stdout.contains("draw offer declined"), "{}", out.stdout);
    assert!(!out.stdout.contains("game over"), "{}", out.stdout);

    // The engine never accepts.
    let out = run(dir.path(), &["play", "--level", "1"], "draw\n");
    out.assert_ok();
    assert!(
        out.stderr.contains("the engine declines draw offers"),
        "{}",
        out.stderr
    );
}

/// Each bad line is explained on stderr and leaves the game exactly as it
/// was: the PGN saved after it equals the one saved before.
#[test]
fn refused_input_changes_nothing() {
    let cases: [(&str, &str); 15] = [
        ("e5", "illegal move here: e5"),
        ("Nf6", "illegal move here: Nf6"),
        ("e2e5", "illegal move here: e2e5"),
        ("xyzzy", "is neither a command nor a move"),
        ("castle now", "unknown command"),
        ("pick e7", "pick one of your own"),
        ("pick e4", "e4 is empty"),
        ("pick k9", "is not a square"),
        ("place e4", "nothing is picked"),
        ("info", "usage: info SQUARE"),
        ("save", "usage: save FILE"),
        ("load missing.pgn", "cannot read missing.pgn"),
        ("load bad.pgn", "not readable PGN"),
        ("flip the board", "flip takes no argument"),
        ("save no/such/dir/x.pgn", "cannot write"),
    ];
    let dir = tempdir();
    std::fs::write(dir.path().join("bad.pgn"), "1. e4 e5 2. Ke3 *\n").expect("write");
    let baseline = run(
        dir.path(),
        &["play", "--human"],
        "d4\nd5\nsave before.pgn\n",
    );
    baseline.assert_ok();
    let before = std::fs::read_to_string(dir.path().join("before.pgn")).expect("read");
    for (bad, explanation) in cases {
        let input = format!("d4\nd5\n{bad}\nsave after.pgn\n");
        let out = run(dir.path(), &["play", "--human"], &input);
        out.assert_ok();
        assert!(
            out.stderr.contains(explanation),
            "{bad:?}: expected {explanation:?} on stderr, got {:?}",
            out.stderr
        );
        assert_eq!(out.stderr.lines().count(), 1, "{bad:?}: {}", out.stderr);
        let after = std::fs::read_to_string(dir.path().join("after.pgn")).expect("read");
        assert_eq!(after, before, "{bad:?} changed the game");
    }
}

#[test]
fn undo_against_the_engine_takes_back_its_answer_too() {
    let dir = tempdir();
    let out = run(
        dir.path(),
        &["play", "--level", "1"],
        "e4\nundo\nsave u.pgn\nundo\n",
    );
    out.assert_ok();
    assert!(out.stdout.contains("took back 2 moves"), "{}", out.stdout);
    assert!(out.stderr.contains("nothing to undo"), "{}", out.stderr);
    let (moves, _) = check_pgn(&dir.path().join("u.pgn"));
    assert!(moves.is_empty(), "{moves:?}");
}

#[test]
fn bad_arguments_exit_non_zero_with_a_reason() {
    let dir = tempdir();
    let cases: [(&[&str], &str); 4] = [
        (&["play", "--level", "9"], "9"),
        (&["play", "--fen", "not a fen"], "--fen"),
        (&["play", "--pgn", "nowhere.pgn"], "cannot read nowhere.pgn"),
        (&["play", "--human", "--level", "2"], "cannot be used with"),
    ];
    for (args, reason) in cases {
        let out = run(dir.path(), args, "");
        assert!(!out.status.success(), "{args:?} should fail");
        assert!(out.stderr.contains(reason), "{args:?}: {}", out.stderr);
    }
}

#[test]
fn a_random_colour_is_one_of_the_two() {
    let dir = tempdir();
    let out = run(
        dir.path(),
        &["play", "--level", "1", "--color", "random"],
        "save r.pgn\n",
    );
    out.assert_ok();
    let (moves, _) = check_pgn(&dir.path().join("r.pgn"));
    // White: nothing played yet; black: the engine opened.
    assert!(moves.len() <= 1, "{moves:?}");
}

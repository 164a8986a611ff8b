//! The search through the real `rookery-engine` binary: `go` with every kind
//! of limit, `info` lines, `stop`, the options (`Level`, `Hash`, `Threads`,
//! `MultiPV`, `UCI_LimitStrength` and `UCI_Elo`, pondering), and the
//! `bench` argument. Waits time out instead of hanging; no timing asserts.

use std::process::Command;
use std::time::Duration;

use rookery_engine::Position;

mod uci_engine;
use uci_engine::{bestmove, Engine, TIMEOUT};

/// The word after `key` in an `info` line.
fn field<'a>(line: &'a str, key: &str) -> Option<&'a str> {
    let mut words = line.split_whitespace();
    words.by_ref().find(|w| *w == key)?;
    words.next()
}

fn legal_in_startpos_after(moves: &[&str], best: &str) -> bool {
    let mut p = Position::startpos();
    for m in moves {
        p = p.play(p.parse_uci(m).expect("legal")).expect("legal");
    }
    p.parse_uci(best).is_ok()
}

#[test]
fn every_go_limit_gives_a_legal_bestmove() {
    let mut engine = Engine::start();
    engine.send("setoption name Hash value 8");
    for go in [
        "go depth 5",
        "go nodes 5000",
        "go movetime 50",
        "go wtime 1000 btime 1000 winc 10 binc 10",
        "go wtime 300 btime 300 movestogo 5",
        "go mate 2",
    ] {
        let (_, best) = engine.search("position startpos moves e2e4 e7e5", go);
        assert!(
            legal_in_startpos_after(&["e2e4", "e7e5"], &best),
            "{go}: {best}"
        );
    }
}

#[test]
fn info_lines_carry_depth_score_nodes_nps_time_and_pv() {
    let mut engine = Engine::start();
    let (lines, best) = engine.search("position startpos", "go depth 6");
    let infos: Vec<&String> = lines
        .iter()
        .filter(|l| l.starts_with("info depth"))
        .collect();
    assert_eq!(infos.len(), 6, "{lines:?}");
    for (i, line) in infos.iter().enumerate() {
        let words: Vec<&str> = line.split_whitespace().collect();
        let after = |key: &str| {
            let at = words.iter().position(|w| *w == key).expect(key);
            words[at + 1]
        };
        assert_eq!(after("depth"), (i + 1).to_string());
        assert!(["cp", "mate"].contains(&after("score")), "{line}");
        for key in ["nodes", "nps", "time"] {
            after(key).parse::<u64>().expect(key);
        }
        assert!(legal_in_startpos_after(&[], after("pv")), "{line}");
    }
    assert!(infos
        .last()
        .is_some_and(|l| l.contains(&format!(" pv {best}"))));
}

#[test]
fn mate_scores_and_levels() {
    let mut engine = Engine::start();
    let (lines, best) = engine.search(
        "position fen 6k1/5ppp/8/8/8/8/8/R5K1 w - - 0 1",
        "go depth 4",
    );
    assert_eq!(best, "a1a8");
    assert!(
        lines.iter().any(|l| l.contains("score mate 1")),
        "{lines:?}"
    );
    engine.send("setoption name Level value 1");
    for _ in 0..5 {
        let (_, best) = engine.search("position startpos", "go wtime 5000 btime 5000");
        assert!(legal_in_startpos_after(&[], &best), "{best}");
    }
}

#[test]
fn stop_ends_a_long_search() {
    let mut engine = Engine::start();
    engine.send("position startpos");
    engine.send("go movetime 600000");
    // Wait until it has searched a little, then stop it.
    loop {
        let line = engine.lines.recv_timeout(TIMEOUT).expect("info lines");
        if line.starts_with("info depth 3") {
            break;
        }
    }
    engine.send("stop");
    let best = loop {
        let line = engine
            .lines
            .recv_timeout(TIMEOUT)
            .expect("bestmove after stop");
        if let Some(best) = line.strip_prefix("bestmove ") {
            break best.split_whitespace().next().unwrap_or("").to_string();
        }
    };
    assert!(legal_in_startpos_after(&[], &best));
}

#[test]
fn bench_prints_nodes_and_nps_last() {
    let output = Command::new(env!("CARGO_BIN_EXE_rookery-engine"))
        .args(["bench", "4"])
        .output()
        .expect("run bench");
    assert!(output.status.success());
    let text = String::from_utf8(output.stdout).expect("utf-8");
    let last = text.lines().last().expect("output");
    let words: Vec<&str> = last.split_whitespace().collect();
    assert_eq!(words.len(), 4, "{last}");
    assert_eq!((words[1], words[3]), ("nodes", "nps"));
    let nodes: u64 = words[0].parse().expect("node count");
    assert!(nodes > 0);
    words[2].parse::<u64>().expect("nps");
    // The node count is a signature: the same on every run.
    let again = Command::new(env!("CARGO_BIN_EXE_rookery-engine"))
        .args(["bench", "4"])
        .output()
        .expect("run bench");
    let again = String::from_utf8(again.stdout).expect("utf-8");
    let again_nodes = again
        .lines()
        .last()
        .and_then(|l| l.split_whitespace().next());
    assert_eq!(again_nodes, Some(words[0]));
    let bad = Command::new(env!("CARGO_BIN_EXE_rookery-engine"))
        .args(["bench", "x"])
        .output()
        .expect("run bench");
    assert!(!bad.status.success());
}

/// `bench960`: the search on Chess960 positions in Chess960 mode, with
/// the same last line as `bench`, the same node count on every run.
#[test]
fn bench960_searches_chess960_positions() {
    let run = || {
        let output = Command::new(env!("CARGO_BIN_EXE_rookery-engine"))
            .args(["bench960", "4"])
            .output()
            .expect("run bench960");
        assert!(output.status.success());
        let text = String::from_utf8(output.stdout).expect("utf-8");
        let last = text.lines().last().expect("output").to_string();
        let words: Vec<String> = last.split_whitespace().map(str::to_string).collect();
        assert_eq!(words.len(), 4, "{last}");
        assert_eq!((words[1].as_str(), words[3].as_str()), ("nodes", "nps"));
        assert_eq!(text.lines().count(), 8, "{text}");
        words[0].parse::<u64>().expect("node count")
    };
    let nodes = run();
    assert!(nodes > 0);
    assert_eq!(run(), nodes);
}

#[test]
fn multipv_reports_distinct_lines_best_first() {
    let mut engine = Engine::start();
    engine.send("setoption name MultiPV value 3");
    let (lines, best) = engine.search("position startpos moves e2e4 e7e5", "go depth 6");
    let last: Vec<&String> = lines
        .iter()
        .filter(|l| l.starts_with("info depth 6 "))
        .collect();
    assert_eq!(last.len(), 3, "{lines:?}");
    let mut firsts = Vec::new();
    let mut scores = Vec::new();
    for (k, line) in last.iter().enumerate() {
        assert_eq!(field(line, "multipv"), Some((k + 1).to_string().as_str()));
        assert_eq!(field(line, "score"), Some("cp"), "{line}");
        scores.push(field(line, "cp").unwrap().parse::<i32>().expect("cp"));
        firsts.push(field(line, "pv").expect("pv").to_string());
    }
    assert!(firsts[0] != firsts[1] && firsts[1] != firsts[2] && firsts[0] != firsts[2]);
    assert!(scores.windows(2).all(|w| w[0] >= w[1]), "{scores:?}");
    assert_eq!(best, firsts[0]);
    for mv in &firsts {
        assert!(legal_in_startpos_after(&["e2e4", "e7e5"], mv), "{mv}");
    }
    // Back to one line: only `multipv 1` is reported.
    engine.send("setoption name MultiPV value 1");
    let (lines, _) = engine.search("position startpos", "go depth 4");
    assert!(lines
        .iter()
        .filter(|l| l.starts_with("info depth"))
        .all(|l| field(l, "multipv") == Some("1")));
}

#[test]
fn threads_find_the_same_mate_and_play_legal_moves() {
    let mut engine = Engine::start();
    engine.send("setoption name Threads value 3");
    let (lines, best) = engine.search(
        "position fen r5rk/5p1p/5R2/4B3/8/8/7P/7K w - - 0 1",
        "go depth 7",
    );
    assert_eq!(best, "f6a6");
    assert!(
        lines.iter().any(|l| l.contains("score mate 3")),
        "{lines:?}"
    );
    for go in [
        "go movetime 200",
        "go wtime 1000 btime 1000 winc 10 binc 10",
    ] {
        let (_, best) = engine.search("position startpos moves e2e4 e7e5", go);
        assert!(
            legal_in_startpos_after(&["e2e4", "e7e5"], &best),
            "{go}: {best}"
        );
    }
    engine.send("setoption name Threads value 0");
    assert!(engine
        .next_line()
        .starts_with("info string Threads must be"));
}

#[test]
fn limit_strength_plays_on_the_ladder() {
    let mut engine = Engine::start();
    engine.send("setoption name UCI_LimitStrength value true");
    engine.send("setoption name UCI_Elo value 850");
    // The bottom of the ladder is level 1: two plies at most.
    let (lines, best) = engine.search("position startpos", "go depth 10");
    assert!(legal_in_startpos_after(&[], &best), "{best}");
    let depths: Vec<u32> = lines
        .iter()
        .filter_map(|l| field(l, "depth")?.parse().ok())
        .collect();
    assert!(
        !depths.is_empty() && depths.iter().all(|&d| d <= 2),
        "{lines:?}"
    );
    // Between two levels, a legal move on the clock.
    engine.send("setoption name UCI_Elo value 1600");
    let (_, best) = engine.search(
        "position startpos",
        "go wtime 5000 btime 5000 winc 50 binc 50",
    );
    assert!(legal_in_startpos_after(&[], &best), "{best}");
    engine.send("setoption name UCI_Elo value 3000");
    assert!(engine
        .next_line()
        .starts_with("info string UCI_Elo must be 850 to 2500"));
    // Off again: full strength, the GUI's depth.
    engine.send("setoption name UCI_LimitStrength value false");
    let (lines, _) = engine.search("position startpos", "go depth 6");
    assert!(
        lines.iter().any(|l| l.starts_with("info depth 6 ")),
        "{lines:?}"
    );
}

/// Asks `isready` and checks that no `bestmove` came before `readyok`.
fn assert_still_thinking(engine: &mut Engine) {
    engine.send("isready");
    let before = engine.read_until(|l| l == "readyok");
    assert!(
        !before.iter().any(|l| l.starts_with("bestmove")),
        "{before:?}"
    );
}

#[test]
fn ponder_waits_for_ponderhit_or_stop() {
    let mut engine = Engine::start();
    engine.send("setoption name Ponder value true");
    // Each case: the `go`, the `info` line to wait for, a pause, and the
    // word that ends the pondering; until that word, no `bestmove`.
    for (go, wait_for, pause, word) in [
        // A pondering search that finishes (depth 3) holds its move until
        // `ponderhit`.
        (
            "go ponder depth 3 wtime 10000 btime 10000",
            "info depth 3 ",
            100,
            "ponderhit",
        ),
        // A 1 ms clock does not end a pondering search: only `stop` does,
        // and it answers with a move.
        ("go ponder wtime 1 btime 1", "info depth 4 ", 0, "stop"),
        // After `ponderhit` the clock runs, and the move comes on its own.
        (
            "go ponder wtime 2000 btime 2000",
            "info depth 4 ",
            0,
            "ponderhit",
        ),
    ] {
        engine.send("position startpos moves e2e4");
        engine.send(go);
        engine.read_until(|l| l.starts_with(wait_for));
        std::thread::sleep(Duration::from_millis(pause));
        assert_still_thinking(&mut engine);
        engine.send(word);
        let best = engine
            .read_until(|l| l.starts_with("bestmove "))
            .pop()
            .unwrap();
        assert!(
            legal_in_startpos_after(&["e2e4"], &bestmove(&best)),
            "{go}: {best}"
        );
    }
}

/// The nodes of the last `info depth` line of a fresh search (`ucinewgame`
/// first, so no table or history carries over) at `level` to `depth`.
fn fresh_nodes(engine: &mut Engine, level: u8, depth: u32) -> u64 {
    engine.send("ucinewgame");
    engine.send(&format!("setoption name Level value {level}"));
    let go = format!("go depth {depth}");
    let (lines, _) = engine.search("position startpos moves e2e4", &go);
    lines
        .iter()
        .filter(|l| l.starts_with("info depth"))
        .filter_map(|l| field(l, "nodes")?.parse().ok())
        .next_back()
        .expect("an info depth line")
}

#[test]
fn eval_file_and_use_nnue_switch_the_evaluation() {
    let dir = std::env::temp_dir().join(format!("rookery-uci-nnue-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let path = dir.join("random.nnue");
    std::fs::write(&path, rookery_engine::nnue::random_network_file(32, 1, 1)).expect("write net");
    let path = path.to_str().expect("UTF-8 path");

    let mut engine = Engine::start();
    engine.send("uci");
    let lines = engine.read_until(|l| l == "uciok");
    assert!(lines.contains(&"option name EvalFile type string default <built-in>".to_string()));
    assert!(lines.contains(&"option name UseNNUE type check default true".to_string()));
    // Full strength searches with the built-in network by default, level 7
    // with the hand-written evaluation whatever UseNNUE says (depth 4 ends
    // well inside level 7's node and time caps, so its search is whole).
    let built_in = fresh_nodes(&mut engine, 8, 6);
    let seven = fresh_nodes(&mut engine, 7, 4);
    engine.send("setoption name UseNNUE value false");
    let hand = fresh_nodes(&mut engine, 8, 6);
    assert_eq!(fresh_nodes(&mut engine, 7, 4), seven);
    assert_ne!(built_in, hand, "the network's tree is another one");
    assert_eq!(
        fresh_nodes(&mut engine, 8, 4),
        seven,
        "level 7 is full strength's hand-written search, capped"
    );

    engine.send("setoption name EvalFile value /nonexistent/net.nnue");
    assert!(engine.next_line().contains("not read"));
    // A device is refused before it is read (/dev/zero would never end).
    engine.send("setoption name EvalFile value /dev/zero");
    assert!(engine.next_line().contains("not a regular file"));
    engine.send(&format!("setoption name EvalFile value {path}"));
    assert!(engine.next_line().contains("a 32x2 network"));
    assert_eq!(fresh_nodes(&mut engine, 8, 6), hand, "UseNNUE is still off");
    engine.send("setoption name UseNNUE value true");
    let random = fresh_nodes(&mut engine, 8, 6);
    assert_ne!(random, built_in);
    assert_ne!(random, hand);
    engine.send("setoption name EvalFile value <built-in>");
    assert!(engine.next_line().contains("the built-in network"));
    assert_eq!(fresh_nodes(&mut engine, 8, 6), built_in);

    // `bench DEPTH NETWORK`: both evaluations, side by side.
    let output = Command::new(env!("CARGO_BIN_EXE_rookery-engine"))
        .args(["bench", "3", path])
        .output()
        .expect("run bench");
    assert!(output.status.success());
    let text = String::from_utf8(output.stdout).expect("utf-8");
    for name in ["hand-written:", "network:"] {
        assert!(
            text.lines()
                .any(|l| l.trim_start().starts_with(name) && l.contains(" nps ")),
            "{text}"
        );
    }
    let built_in = Command::new(env!("CARGO_BIN_EXE_rookery-engine"))
        .args(["bench", "2", "built-in"])
        .output()
        .expect("run bench");
    assert!(built_in.status.success());
    let text = String::from_utf8(built_in.stdout).expect("utf-8");
    assert!(text.starts_with("network built-in: 256x2"), "{text}");
    let bad = Command::new(env!("CARGO_BIN_EXE_rookery-engine"))
        .args(["bench", "3", "/nonexistent/net.nnue"])
        .output()
        .expect("run bench");
    assert!(!bad.status.success());
    let _ = std::fs::remove_dir_all(&dir);
}

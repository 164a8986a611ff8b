//! The search through the real `rookery-engine` binary: `go` with every kind
//! of limit, `info` lines, `stop`, the `Level` and `Hash` options, and the
//! `bench` argument. Waits time out instead of hanging; no timing asserts.

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{self, Receiver};
use std::time::Duration;

use rookery_engine::Position;

const TIMEOUT: Duration = Duration::from_secs(30);

struct Engine {
    child: Child,
    stdin: ChildStdin,
    lines: Receiver<String>,
}

impl Engine {
    fn start() -> Engine {
        let mut child = Command::new(env!("CARGO_BIN_EXE_rookery-engine"))
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("start rookery-engine");
        let stdin = child.stdin.take().expect("stdin");
        let stdout = child.stdout.take().expect("stdout");
        let (tx, lines) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if tx.send(line).is_err() {
                    break; // the test is over
                }
            }
        });
        Engine {
            child,
            stdin,
            lines,
        }
    }

    fn send(&mut self, line: &str) {
        writeln!(self.stdin, "{line}").expect("write to engine");
        self.stdin.flush().expect("flush");
    }

    /// Lines up to and including the `bestmove` line.
    fn search(&mut self, position: &str, go: &str) -> (Vec<String>, String) {
        self.send(position);
        self.send(go);
        let mut lines = Vec::new();
        loop {
            let line = self
                .lines
                .recv_timeout(TIMEOUT)
                .expect("engine answered within the timeout");
            if let Some(best) = line.strip_prefix("bestmove ") {
                let best = best.split_whitespace().next().unwrap_or("").to_string();
                return (lines, best);
            }
            lines.push(line);
        }
    }
}

impl Drop for Engine {
    fn drop(&mut self) {
        let _ = writeln!(self.stdin, "quit");
        let _ = self.stdin.flush();
        for _ in 0..100 {
            if let Ok(Some(_)) = self.child.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
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

//! The UCI shell, fed arbitrary command lines, must never panic, and must
//! keep its word to the GUI.
//!
//! The target keeps its own model of the position the shell should hold
//! (from `position` and `ucinewgame`, keeping the old position when a
//! command is refused) and checks the shell's output against it:
//! - every `go` is answered by exactly one `bestmove`, legal in the model's
//!   position (`0000` exactly when there is no legal move), with a legal
//!   ponder move after it;
//! - every `info ... pv` line of that search is a legal line of play;
//! - `go perft N` prints the node count the engine's perft gives;
//! - `uci` gets `uciok` and `isready` gets `readyok`, once each.
//!
//! Searches and perft are bounded so an iteration stays fast: at most depth
//! 3 and 5,000 nodes, perft at most depth 2, and the `Hash` option at most
//! 2 MiB. Bounding changes only the limits, never what the line says
//! otherwise, so the parser and the shell still see the input as written.
#![no_main]

use std::io::Write;
use std::sync::{Arc, Mutex, OnceLock};

use libfuzzer_sys::fuzz_target;
use rookery_engine::perft;
use rookery_engine::uci::{Command, Output, StartPosition, UciShell};
use rookery_engine::{Game, Position};

/// What the shell writes, shared with the target.
#[derive(Clone, Default)]
struct Captured(Arc<Mutex<Vec<u8>>>);

impl Write for Captured {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.lock().extend_from_slice(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl Captured {
    fn lock(&self) -> std::sync::MutexGuard<'_, Vec<u8>> {
        // A panic anywhere aborts the fuzzer, so a poisoned lock is never
        // seen; recovering keeps this free of unwrap all the same.
        self.0.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn take(&self) -> String {
        String::from_utf8_lossy(&std::mem::take(&mut *self.lock())).into_owned()
    }
}

/// One shell for the whole run: a new one allocates the default 16 MiB
/// table, which would dominate each iteration. Every iteration starts by
/// resetting everything the shell keeps (position, table, level) and ends
/// by restoring the table size if the input changed it. (Resizing on every
/// iteration instead made glibc's heap grow by about 1 MiB per input, as
/// its adaptive mmap threshold moved table-sized blocks into the heap:
/// not a leak, but it would trip libFuzzer's memory limit in long runs.)
fn shell() -> &'static Mutex<(UciShell, Captured)> {
    static SHELL: OnceLock<Mutex<(UciShell, Captured)>> = OnceLock::new();
    SHELL.get_or_init(|| {
        let captured = Captured::default();
        let mut shell = UciShell::new(Output::new(captured.clone()));
        shell.handle(Command::parse(HASH_RESET));
        Mutex::new((shell, captured))
    })
}

const HASH_RESET: &str = "setoption name Hash value 1";

const MAX_LINES: usize = 48;

/// What the output must show, built from the commands as the shell got them.
#[derive(Default)]
struct Expected {
    /// The position of each search, in order.
    searches: Vec<Position>,
    /// The node count of each perft, in order.
    perfts: Vec<u64>,
    uciok: usize,
    readyok: usize,
}

fn bound(command: &mut Command) {
    match command {
        Command::Go(limits) => {
            limits.perft = limits.perft.map(|d| d.min(2));
            limits.depth = Some(limits.depth.unwrap_or(3).min(3));
            limits.nodes = Some(limits.nodes.unwrap_or(5_000).min(5_000));
        }
        Command::SetOption { name, value } if name.eq_ignore_ascii_case("hash") => {
            let too_big = value
                .as_deref()
                .and_then(|v| v.trim().parse::<i64>().ok())
                .is_some_and(|mb| mb > 2);
            if too_big {
                *value = Some("2".into());
            }
        }
        _ => {}
    }
}

/// The position the shell should hold after `position`: the new one when
/// the FEN reads and every move is legal, else the old one.
fn model_position(game: &Game, start: &StartPosition, moves: &[String]) -> Game {
    let new = match start {
        StartPosition::Startpos => Ok(Game::default()),
        StartPosition::Fen(fen) => Game::from_fen(fen).map_err(|_| ()),
    };
    let Ok(mut new) = new else {
        return game.clone();
    };
    for uci in moves {
        if new.play_uci(uci).is_err() {
            return game.clone();
        }
    }
    new
}

/// Checks that `moves` is a legal line from `pos`.
fn check_line(pos: &Position, moves: &[&str], what: &str) {
    let mut pos = pos.clone();
    for (ply, uci) in moves.iter().enumerate() {
        let next = pos.parse_uci(uci).ok().and_then(|mv| pos.play(mv).ok());
        let Some(next) = next else {
            panic!(
                "{what}: move {ply} {uci} of {moves:?} is illegal in {}",
                pos.to_fen()
            );
        };
        pos = next;
    }
}

fn check_output(output: &str, expected: &Expected) {
    let lines: Vec<&str> = output.lines().collect();
    let count = |word: &str| lines.iter().filter(|l| **l == word).count();
    assert_eq!(count("uciok"), expected.uciok, "uciok\n{output}");
    assert_eq!(count("readyok"), expected.readyok, "readyok\n{output}");

    let perfts: Vec<u64> = lines
        .iter()
        .filter_map(|l| l.strip_prefix("Nodes searched: "))
        .map(|n| n.parse().unwrap_or(u64::MAX))
        .collect();
    assert_eq!(perfts, expected.perfts, "perft\n{output}");

    // A search's info lines come before its bestmove, and searches never
    // overlap (`go` waits for the previous one), so the lines between two
    // bestmoves belong to the second search.
    let mut searches = expected.searches.iter();
    let mut current = searches.next();
    for line in &lines {
        let words: Vec<&str> = line.split_whitespace().collect();
        match words.as_slice() {
            ["info", "string", ..] => {}
            ["info", rest @ ..] => {
                let pos = current.unwrap_or_else(|| panic!("info without go\n{output}"));
                if let Some(at) = rest.iter().position(|w| *w == "pv") {
                    check_line(pos, &rest[at + 1..], "pv");
                }
            }
            ["bestmove", best, rest @ ..] => {
                let pos = current.unwrap_or_else(|| panic!("bestmove without go\n{output}"));
                let fen = pos.to_fen();
                if *best == "0000" {
                    assert!(pos.legal_moves().is_empty(), "{fen}: 0000 with legal moves");
                } else {
                    match rest {
                        [] => check_line(pos, &[best], "bestmove"),
                        ["ponder", ponder] => check_line(pos, &[best, ponder], "ponder"),
                        _ => panic!("{fen}: malformed {line:?}"),
                    }
                }
                current = searches.next();
            }
            _ => {}
        }
    }
    assert!(current.is_none(), "a go without bestmove\n{output}");
}

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let mut guard = shell().lock().unwrap_or_else(|e| e.into_inner());
    let (shell, captured) = &mut *guard;
    for reset in ["ucinewgame", "setoption name Level value 8"] {
        shell.handle(Command::parse(reset));
    }
    captured.take();

    let mut game = Game::default();
    let mut expected = Expected::default();
    let mut hash_changed = false;
    for line in text.lines().take(MAX_LINES) {
        let mut command = Command::parse(line);
        bound(&mut command);
        match &command {
            Command::SetOption { name, .. } if name.eq_ignore_ascii_case("hash") => {
                hash_changed = true
            }
            Command::Uci => expected.uciok += 1,
            Command::IsReady => expected.readyok += 1,
            Command::UciNewGame => game = Game::default(),
            Command::Position { start, moves } => game = model_position(&game, start, moves),
            Command::Go(limits) => match limits.perft {
                Some(depth) => expected.perfts.push(match depth {
                    0 => 1,
                    d => perft::perft(game.position(), d),
                }),
                None => expected.searches.push(game.position().clone()),
            },
            _ => {}
        }
        if !shell.handle(command) {
            break;
        }
    }
    shell.finish_search();
    check_output(&captured.take(), &expected);
    if hash_changed {
        shell.handle(Command::parse(HASH_RESET));
    }
});

//! How long each difficulty level takes to answer, as the server's AI seat
//! calls it: `ai::choose_move` (a fresh one-off searcher per move, no clock).
//!
//! Usage: `cargo run --release -p rookery-engine --example level_latency --
//! [LEVEL ...] [--positions N]` (default: levels 1 to 7, 60 positions: the
//! bench positions and the first openings of `engine/tests/data/openings.epd`).
//! Level 8 thinks for up to its full think cap without a clock; pass `8` to
//! include it anyway. Prints the mean, median, 95th percentile and slowest
//! answer per level in milliseconds.
//!
//! Speed lives here, not in tests: the numbers depend on the machine and its
//! load, so they are reported (tools/calibration.md), never asserted.

use std::process::ExitCode;
use std::sync::atomic::AtomicBool;
use std::time::Instant;

use rookery_engine::{ai, bench, level, Position};

const OPENINGS: &str = include_str!("../tests/data/openings.epd");

fn main() -> ExitCode {
    let mut levels = Vec::new();
    let mut count = 60usize;
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        if arg == "--positions" {
            match args.next().and_then(|n| n.parse().ok()) {
                Some(n) => count = n,
                None => return usage("--positions needs a number"),
            }
        } else {
            match arg.parse::<u8>().ok().and_then(level::level) {
                Some(level) => levels.push(level),
                None => return usage(&format!("no level {arg:?}")),
            }
        }
    }
    if levels.is_empty() {
        levels = level::LEVELS.iter().filter(|l| l.number < 8).collect();
    }

    let positions: Vec<Position> = bench::BENCH_POSITIONS
        .iter()
        .copied()
        .chain(
            OPENINGS
                .lines()
                .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
                .map(|l| l.split(" hmvc").next().unwrap_or(l)),
        )
        .filter_map(|fen| Position::from_fen(&format!("{} 0 1", fen_board_part(fen))).ok())
        .take(count)
        .collect();

    let stop = AtomicBool::new(false);
    println!("level  moves  mean ms  median ms  p95 ms  max ms");
    for level in levels {
        let mut times: Vec<f64> = positions
            .iter()
            .map(|pos| {
                let start = Instant::now();
                let mv = ai::choose_move(pos, &[], level, None, &stop);
                let elapsed = start.elapsed().as_secs_f64() * 1000.0;
                // Keep the answer alive so the search is not optimised out.
                std::hint::black_box(mv);
                elapsed
            })
            .collect();
        times.sort_by(f64::total_cmp);
        let n = times.len().max(1);
        let mean = times.iter().sum::<f64>() / n as f64;
        let at = |q: f64| {
            times
                .get(((n - 1) as f64 * q) as usize)
                .copied()
                .unwrap_or(0.0)
        };
        println!(
            "{:>5}  {:>5}  {mean:>7.1}  {:>9.1}  {:>6.1}  {:>6.1}",
            level.number,
            times.len(),
            at(0.5),
            at(0.95),
            at(1.0)
        );
    }
    ExitCode::SUCCESS
}

/// The first four FEN fields (board, side, castling, en passant): EPD lines
/// carry their move counters as operations instead.
fn fen_board_part(line: &str) -> String {
    line.split_whitespace()
        .take(4)
        .collect::<Vec<_>>()
        .join(" ")
}

fn usage(problem: &str) -> ExitCode {
    eprintln!("level_latency: {problem}\nusage: level_latency [LEVEL ...] [--positions N]");
    ExitCode::from(2)
}

//! Perft node counts for the standard positions in `data/perft.epd` and
//! the 960 Chess960 start positions in `data/chess960-starts.epd`
//! (Scharnagl numbers 0–959, depths 1–4 from Stockfish 15.1; copied from
//! `../shared/data/`).
//!
//! The shallow depths run in every `cargo test`; the deep ones (billions of
//! nodes, and depth 4 of every Chess960 start) are `#[ignore]`d and run in
//! release mode by CI:
//! `cargo test --release -p rookery-engine --test perft -- --ignored`.

use rookery_engine::perft::perft;
use rookery_engine::{CastlingMode, Position};

struct Case {
    id: String,
    fen: String,
    counts: Vec<(u32, u64)>,
}

const STANDARD: &str = include_str!("data/perft.epd");
const CHESS960: &str = include_str!("data/chess960-starts.epd");

fn cases(text: &str) -> Vec<Case> {
    text.lines()
        .filter(|line| !line.trim().is_empty() && !line.starts_with('#'))
        .map(|line| {
            let mut fields = line.split(';').map(str::trim);
            let fen = fields.next().expect("a FEN").to_string();
            let mut id = String::new();
            let mut counts = Vec::new();
            for field in fields {
                if let Some(name) = field.strip_prefix("id ") {
                    id = name.to_string();
                } else if let Some(rest) = field.strip_prefix('D') {
                    let (depth, nodes) = rest.split_once(' ').expect("D<depth> <nodes>");
                    counts.push((depth.parse().expect("depth"), nodes.parse().expect("nodes")));
                }
            }
            Case { id, fen, counts }
        })
        .collect()
}

/// Runs every case of `suite` whose depth is in `depths`, up to
/// `max_nodes` leaf nodes per (position, depth), and from `min_nodes` up,
/// so the fast and deep suites split the work.
fn run(
    suite: &str,
    depths: std::ops::RangeInclusive<u32>,
    min_nodes: u64,
    max_nodes: u64,
) -> usize {
    let mut checked = 0;
    for case in cases(suite) {
        let pos = Position::from_fen(&case.fen).unwrap_or_else(|e| panic!("{}: {e}", case.id));
        // The castling mode only changes how moves are spelled, never
        // which ones there are: the 960 starts are counted in the mode a
        // Chess960 game plays in, the standard suite in the standard one.
        let pos = if suite == CHESS960 {
            pos.with_castling_mode(CastlingMode::Chess960)
        } else {
            pos
        };
        for &(depth, expected) in &case.counts {
            if expected < min_nodes || expected > max_nodes || !depths.contains(&depth) {
                continue;
            }
            assert_eq!(perft(&pos, depth), expected, "{} depth {depth}", case.id);
            checked += 1;
        }
    }
    checked
}

#[test]
fn perft_shallow() {
    assert!(run(STANDARD, 1..=u32::MAX, 0, 5_000_000) > 20);
}

/// Every Chess960 start to depth 3 (about nine million leaves).
#[test]
fn perft_chess960_starts_shallow() {
    assert_eq!(run(CHESS960, 1..=3, 0, u64::MAX), 960 * 3);
}

#[test]
#[ignore = "billions of nodes: run in release mode (CI does)"]
fn perft_deep() {
    assert!(run(STANDARD, 1..=u32::MAX, 5_000_001, u64::MAX) > 10);
}

/// Every Chess960 start at depth 4 (about 200 million leaves).
#[test]
#[ignore = "200 million nodes: run in release mode (CI does)"]
fn perft_chess960_starts_deep() {
    assert_eq!(run(CHESS960, 4..=4, 0, u64::MAX), 960);
}

//! Perft node counts for the standard positions in `data/perft.epd`.
//!
//! The shallow depths run in every `cargo test`; the deep ones (billions of
//! nodes) are `#[ignore]`d and run in release mode by CI:
//! `cargo test --release -p rookery-engine --test perft -- --ignored`.

use rookery_engine::perft::perft;
use rookery_engine::Position;

struct Case {
    id: String,
    fen: String,
    counts: Vec<(u32, u64)>,
}

fn cases() -> Vec<Case> {
    let text = include_str!("data/perft.epd");
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

/// Runs every case up to `max_nodes` leaf nodes per (position, depth), and
/// from `min_nodes` up, so the fast and deep suites split the work.
fn run(min_nodes: u64, max_nodes: u64) -> usize {
    let mut checked = 0;
    for case in cases() {
        let pos = Position::from_fen(&case.fen).unwrap_or_else(|e| panic!("{}: {e}", case.id));
        for &(depth, expected) in &case.counts {
            if expected < min_nodes || expected > max_nodes {
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
    assert!(run(0, 5_000_000) > 20);
}

#[test]
#[ignore = "billions of nodes: run in release mode (CI does)"]
fn perft_deep() {
    assert!(run(5_000_001, u64::MAX) > 10);
}

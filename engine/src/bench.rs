//! `rookery-engine bench`: a fixed set of positions searched to a fixed
//! depth with a fresh table each. The total node count is a signature of the
//! search's behaviour (it changes exactly when the search does), and the
//! time gives nodes per second.

use std::sync::atomic::AtomicBool;
use std::time::{Duration, Instant};

use crate::position::Position;
use crate::search::{Limits, Searcher};

/// Opening, middlegame and endgame positions of varied character.
pub const BENCH_POSITIONS: [&str; 12] = [
    "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1",
    "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1",
    "r1bqkb1r/pppp1ppp/2n2n2/4p3/2B1P3/5N2/PPPP1PPP/RNBQK2R w KQkq - 4 4",
    "r2q1rk1/pp2bppp/2n1pn2/2pp4/3P4/2PBPN2/PP1N1PPP/R2QK2R w KQ - 0 9",
    "2r2rk1/pp1bqppp/2n1p3/3pP3/3P4/P1PB1N2/5PPP/R2Q1RK1 w - - 3 15",
    "r1b2rk1/2q1b1pp/p2ppn2/1p6/3QP3/1BN1B3/PPP3PP/R4RK1 w - - 0 1",
    "4rrk1/pp1n3p/3q2pQ/2p1pb2/2PP4/2P3N1/P2B2PP/4RRK1 b - - 7 19",
    "r3r1k1/2p2ppp/p1p1bn2/8/1q2P3/2NPQN2/PPP3PP/R4RK1 b - - 2 15",
    "8/2p5/3p4/KP5r/1R3p1k/8/4P1P1/8 w - - 0 1",
    "6k1/6p1/6Pp/ppp5/3pn2P/1P3K2/1PP2P2/8 b - - 0 1",
    "8/8/1p1r1k2/p1pPN1p1/P3KnP1/1P6/8/3R4 b - - 0 1",
    "5k2/7R/4P2p/5K2/p1r2P1p/8/8/8 b - - 0 1",
];

pub const BENCH_DEPTH: u32 = 11;

/// Totals of one bench run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BenchReport {
    pub nodes: u64,
    pub elapsed: Duration,
}

impl BenchReport {
    pub fn nps(&self) -> u64 {
        (self.nodes as u128 * 1_000_000 / self.elapsed.as_micros().max(1)) as u64
    }
}

/// Searches every bench position to `depth`, calling `on_position` with
/// each position's index, FEN and node count.
pub fn run(depth: u32, mut on_position: impl FnMut(usize, &str, u64)) -> BenchReport {
    let stop = AtomicBool::new(false);
    let limits = Limits {
        depth: Some(depth),
        ..Limits::default()
    };
    let mut nodes = 0;
    let start = Instant::now();
    for (i, fen) in BENCH_POSITIONS.iter().enumerate() {
        let pos = Position::from_fen(fen).expect("bench positions are valid");
        let mut searcher = Searcher::new(16);
        let result = searcher.search(&pos, &[], &limits, &stop, |_| {});
        nodes += result.nodes;
        on_position(i, fen, result.nodes);
    }
    BenchReport {
        nodes,
        elapsed: start.elapsed(),
    }
}

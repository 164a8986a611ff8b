//! `rookery-engine bench`: a fixed set of positions searched to a fixed
//! depth with a fresh table each. The total node count is a signature of the
//! search's behaviour (it changes exactly when the search does), and the
//! time gives nodes per second.
//!
//! With a network ([`compare`]) each position is searched twice in a row,
//! with the hand-written evaluation and with the network, so that load
//! from other processes falls on both alike and the two speeds can be set
//! side by side.

use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::nnue::Network;
use crate::position::{CastlingMode, Position};
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

/// Chess960 start positions (Scharnagl 0, 105, 254, 361, 700, 959:
/// kings from the b- to the g-file, rooks on every file), in Shredder-FEN,
/// and one where both sides may castle on either side at once (king
/// e-file, rooks b and g), searched in the Chess960 castling mode by
/// `rookery-engine bench960`.
pub const BENCH_CHESS960_POSITIONS: [&str; 7] = [
    "bbqnnrkr/pppppppp/8/8/8/8/PPPPPPPP/BBQNNRKR w HFhf - 0 1",
    "qnrbbnkr/pppppppp/8/8/8/8/PPPPPPPP/QNRBBNKR w HChc - 0 1",
    "nrkqnbbr/pppppppp/8/8/8/8/PPPPPPPP/NRKQNBBR w HBhb - 0 1",
    "nrkbbrqn/pppppppp/8/8/8/8/PPPPPPPP/NRKBBRQN w FBfb - 0 1",
    "rbqknnbr/pppppppp/8/8/8/8/PPPPPPPP/RBQKNNBR w HAha - 0 1",
    "rkrnnqbb/pppppppp/8/8/8/8/PPPPPPPP/RKRNNQBB w CAca - 0 1",
    "1r1qk1r1/pbppbppp/1pn2n2/4p3/4P3/1PN2N2/PBPPBPPP/1R1QK1R1 w GBgb - 4 6",
];

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
    let mut report = BenchReport {
        nodes: 0,
        elapsed: Duration::ZERO,
    };
    for (i, fen) in BENCH_POSITIONS.iter().enumerate() {
        let nodes = search_one(fen, CastlingMode::Standard, depth, None, &mut report);
        on_position(i, fen, nodes);
    }
    report
}

/// [`run`] on the Chess960 positions ([`BENCH_CHESS960_POSITIONS`]), in
/// the Chess960 castling mode.
pub fn run_chess960(depth: u32, mut on_position: impl FnMut(usize, &str, u64)) -> BenchReport {
    let mut report = BenchReport {
        nodes: 0,
        elapsed: Duration::ZERO,
    };
    for (i, fen) in BENCH_CHESS960_POSITIONS.iter().enumerate() {
        let nodes = search_one(fen, CastlingMode::Chess960, depth, None, &mut report);
        on_position(i, fen, nodes);
    }
    report
}

/// [`run`] twice over, interleaved: each position with the hand-written
/// evaluation, then with `network`. `on_position` hears each position's
/// index, FEN and the two node counts; the reports are in the same order.
pub fn compare(
    depth: u32,
    network: &Arc<Network>,
    mut on_position: impl FnMut(usize, &str, u64, u64),
) -> [BenchReport; 2] {
    let mut reports = [BenchReport {
        nodes: 0,
        elapsed: Duration::ZERO,
    }; 2];
    for (i, fen) in BENCH_POSITIONS.iter().enumerate() {
        let standard = CastlingMode::Standard;
        let hand = search_one(fen, standard, depth, None, &mut reports[0]);
        let net = search_one(fen, standard, depth, Some(network), &mut reports[1]);
        on_position(i, fen, hand, net);
    }
    reports
}

/// Searches one bench position with a fresh searcher, adding its nodes and
/// time to `report`; returns its nodes.
fn search_one(
    fen: &str,
    mode: CastlingMode,
    depth: u32,
    network: Option<&Arc<Network>>,
    report: &mut BenchReport,
) -> u64 {
    let stop = AtomicBool::new(false);
    let limits = Limits {
        depth: Some(depth),
        ..Limits::default()
    };
    let pos = Position::from_fen(fen)
        .expect("bench positions are valid")
        .with_castling_mode(mode);
    // Timed as the bench always was, the fresh table included; not the
    // second clearing of the table that switching to a network does.
    let start = Instant::now();
    let mut searcher = Searcher::new(16);
    report.elapsed += start.elapsed();
    searcher.set_network(network.cloned());
    let start = Instant::now();
    let result = searcher.search(&pos, &[], &limits, &stop, |_| {});
    report.elapsed += start.elapsed();
    report.nodes += result.nodes;
    result.nodes
}

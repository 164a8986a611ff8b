//! The search with an evaluation network (`Searcher::set_network`): the
//! accumulators it keeps incrementally along its path equal a refresh at
//! every evaluation (checked inside the search in debug builds, which is
//! how `cargo test` builds), it plays legal moves and finds mates on one
//! thread and on two, with MultiPV and with a handicap, and switching the
//! network off gives the hand-written search back node for node; a
//! king-bucket network's accumulators too.
//!
//! The networks are random (the machinery is under test, not a net's
//! play); a trained one is not committed until it wins its matches.

use std::sync::atomic::AtomicBool;
use std::sync::Arc;

use rookery_engine::bench::BENCH_POSITIONS;
use rookery_engine::nnue::{random_network_file, random_network_file_with, KingBuckets, Network};
use rookery_engine::search::{Handicap, Limits, Score, SearchResult, Searcher};
use rookery_engine::Position;

fn network(hidden: usize, seed: u64) -> Arc<Network> {
    Arc::new(Network::from_bytes(&random_network_file(hidden, 1, seed)).expect("a valid file"))
}

fn search(searcher: &mut Searcher, fen: &str, limits: &Limits) -> SearchResult {
    let stop = AtomicBool::new(false);
    let position = Position::from_fen(fen).expect("valid FEN");
    searcher.search(&position, &[], limits, &stop, |_| {})
}

fn depth(depth: u32) -> Limits {
    Limits {
        depth: Some(depth),
        ..Limits::default()
    }
}

/// Positions where castling, en passant and promotion happen in the tree,
/// besides the bench's.
const SPECIAL: [&str; 3] = [
    // Castling both ways for both sides, en passant after b4 or g5 pushes.
    "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1",
    // Promotions and under-promotions with captures.
    "n1n5/PPPk4/8/8/8/8/4Kppp/5N1N b - - 0 1",
    // An en-passant capture available at once.
    "rnbqkbnr/ppp1p1pp/8/3pPp2/8/8/PPPP1PPP/RNBQKBNR w KQkq f6 0 3",
];

#[test]
fn a_network_search_plays_legal_moves_with_its_accumulators_equal_to_refreshes() {
    // In a debug build every evaluation of these searches compares the
    // incremental accumulators with a refresh of the position.
    searches_play_legal_moves(&network(32, 5));
}

/// Depth-6 searches of the bench's and [`SPECIAL`]'s positions with `net`:
/// a legal best move and a legal PV from each.
fn searches_play_legal_moves(net: &Arc<Network>) {
    for fen in BENCH_POSITIONS.iter().chain(SPECIAL.iter()) {
        let mut searcher = Searcher::new(4);
        searcher.set_network(Some(Arc::clone(net)));
        let result = search(&mut searcher, fen, &depth(6));
        let position = Position::from_fen(fen).unwrap();
        let best = result.best_move.expect("a move");
        assert!(position.is_legal(best), "{fen}: {best}");
        let mut p = position.clone();
        for &m in &result.pv {
            p = p.play(m).expect("PV moves are legal");
        }
    }
}

#[test]
fn a_king_bucket_network_search_keeps_its_accumulators_equal_to_refreshes() {
    // The same, with 16 mirrored king buckets: kings step into other
    // buckets and across the mirror in these trees (castling, the
    // endgames' king walks), and a side is brought there from the
    // refresh table.
    let kings = KingBuckets::mirrored(16).expect("a layout");
    let net = Arc::new(
        Network::from_bytes(&random_network_file_with(32, 8, &kings, 7)).expect("a valid file"),
    );
    searches_play_legal_moves(&net);
    let chess960 = "rk4r1/pppppppp/8/8/8/8/PPPPPPPP/RK4R1 w KQkq - 0 1";
    let stop = AtomicBool::new(false);
    let position = Position::from_fen(chess960)
        .unwrap()
        .with_castling_mode(rookery_engine::CastlingMode::Chess960);
    let mut searcher = Searcher::new(4);
    searcher.set_network(Some(net));
    let result = searcher.search(&position, &[], &depth(6), &stop, |_| {});
    assert!(position.is_legal(result.best_move.expect("a move")));
}

#[test]
fn a_network_search_is_deterministic_and_finds_mates() {
    let net = network(32, 6);
    let mut first = Searcher::new(4);
    first.set_network(Some(Arc::clone(&net)));
    let mut second = Searcher::new(4);
    second.set_network(Some(Arc::clone(&net)));
    let fen = BENCH_POSITIONS[1];
    let (a, b) = (
        search(&mut first, fen, &depth(7)),
        search(&mut second, fen, &depth(7)),
    );
    assert_eq!(
        (a.best_move, a.nodes, a.score),
        (b.best_move, b.nodes, b.score)
    );
    // Mate is found by the search, whatever the evaluation says.
    let mut searcher = Searcher::new(4);
    searcher.set_network(Some(net));
    let mate_in_one = search(
        &mut searcher,
        "6k1/5ppp/8/8/8/8/8/R5K1 w - - 0 1",
        &depth(3),
    );
    assert_eq!(mate_in_one.score, Score::Mate(1));
    let mate_in_two = search(
        &mut searcher,
        "r2qkb1r/pp2nppp/3p4/2pNN1B1/2BnP3/3P4/PPP2PPP/R2bK2R w KQkq - 1 1",
        &depth(5),
    );
    assert_eq!(mate_in_two.score, Score::Mate(2));
}

#[test]
fn two_threads_multipv_and_a_handicap_work_with_a_network() {
    let net = network(16, 7);
    let mut searcher = Searcher::new(4);
    searcher.set_network(Some(net));
    searcher.set_threads(2);
    for fen in SPECIAL {
        let position = Position::from_fen(fen).unwrap();
        let two_threads = search(&mut searcher, fen, &depth(6));
        assert!(position.is_legal(two_threads.best_move.unwrap()));
        let multipv = search(
            &mut searcher,
            fen,
            &Limits {
                multipv: 3,
                ..depth(5)
            },
        );
        assert!(multipv.lines.len() >= 2, "{fen}");
        let handicapped = search(
            &mut searcher,
            fen,
            &Limits {
                nodes: Some(3_000),
                handicap: Some(Handicap {
                    temperature_cp: 150,
                    seed: 3,
                }),
                ..Limits::default()
            },
        );
        assert!(position.is_legal(handicapped.best_move.unwrap()));
    }
}

#[test]
fn without_a_network_the_search_is_the_hand_written_one_node_for_node() {
    let fen = BENCH_POSITIONS[3];
    let plain = search(&mut Searcher::new(4), fen, &depth(7));
    let mut searcher = Searcher::new(4);
    searcher.set_network(Some(network(32, 8)));
    let with_net = search(&mut searcher, fen, &depth(7));
    assert_ne!(
        (with_net.nodes, with_net.score),
        (plain.nodes, plain.score),
        "a random network should search differently"
    );
    // Switching it off clears the table (its static evaluations were the
    // network's): the next search is a fresh hand-written one.
    searcher.set_network(None);
    searcher.clear();
    let again = search(&mut searcher, fen, &depth(7));
    assert_eq!(
        (again.best_move, again.nodes, again.score),
        (plain.best_move, plain.nodes, plain.score)
    );
}

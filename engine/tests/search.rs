//! The search and the difficulty levels, through the public API: tactics
//! at fixed depth, draws, limits, determinism and legality everywhere.
//! No timing assertions; waits that could hang are guarded by timeouts.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Arc};
use std::thread;
use std::time::Duration;

use rookery_engine::ai::{self, ClockBudget};
use rookery_engine::level::{self, LEVELS};
use rookery_engine::search::{Limits, Score, SearchResult, Searcher, Signals};
use rookery_engine::{Move, Position};

fn pos(fen: &str) -> Position {
    Position::from_fen(fen).expect("valid FEN")
}

fn search_depth(fen: &str, depth: u32) -> SearchResult {
    let stop = AtomicBool::new(false);
    let limits = Limits {
        depth: Some(depth),
        ..Limits::default()
    };
    Searcher::new(16).search(&pos(fen), &[], &limits, &stop, |_| {})
}

fn mv(position: &Position, uci: &str) -> Move {
    position.parse_uci(uci).expect("legal move")
}

#[test]
fn finds_mate_in_one() {
    let fen = "6k1/5ppp/8/8/8/8/8/R5K1 w - - 0 1";
    let result = search_depth(fen, 3);
    assert_eq!(result.best_move, Some(mv(&pos(fen), "a1a8")));
    assert_eq!(result.score, Score::Mate(1));
}

#[test]
fn finds_mate_in_two() {
    let fen = "r2qkb1r/pp2nppp/3p4/2pNN1B1/2BnP3/3P4/PPP2PPP/R2bK2R w KQkq - 1 1";
    let result = search_depth(fen, 5);
    assert_eq!(result.best_move, Some(mv(&pos(fen), "d5f6")));
    assert_eq!(result.score, Score::Mate(2));
}

#[test]
fn finds_mates_in_three() {
    for fen in [
        "r1b1kb1r/pppp1ppp/5q2/4n3/3KP3/2N3PN/PPP4P/R1BQ1B1R b kq - 0 1",
        "2r3k1/p4p2/3Rp2p/1p2P1pK/8/1P4P1/P3Q2P/1q6 b - - 0 1",
        "r5rk/5p1p/5R2/4B3/8/8/7P/7K w - - 0 1",
    ] {
        let result = search_depth(fen, 7);
        assert_eq!(result.score, Score::Mate(3), "{fen}");
        // The reported line really mates: play it out.
        let mut p = pos(fen);
        for &m in &result.pv {
            p = p.play(m).expect("PV moves are legal");
        }
        assert_eq!(result.pv.len(), 5, "{fen}: {:?}", result.pv);
        assert!(
            p.is_check() && p.legal_moves().is_empty(),
            "{fen}: {:?}",
            result.pv
        );
    }
}

/// Checks near the leaves are searched even when they give material away
/// (they are pruned only when they lose more than a capture may): a search
/// that pruned them as quiet moves still missed both of these sacrifices at
/// depth 9; they are found from depth 7 (237) and 6 (281) on.
#[test]
fn sacrificial_checks_near_the_leaves_are_not_pruned() {
    for (fen, best) in [
        // Win At Chess 237: ...Rc1+ Kxc1 Qc4+ starts a king hunt
        // (Stockfish 15.1: mate in 13).
        (
            "r5k1/pQp2qpp/8/4pbN1/3P4/6P1/PPr4P/1K1R3R b - - 0 1",
            "c2c1",
        ),
        // Win At Chess 281: Rxh7+ Kxh7 Qe7+, then Rg8+ (Stockfish 15.1:
        // more than six pawns up).
        ("2R5/2R4p/5p1k/6n1/8/1P2QPPq/r7/6K1 w - - 0 1", "c7h7"),
    ] {
        let result = search_depth(fen, 8);
        assert_eq!(result.best_move, Some(mv(&pos(fen), best)), "{fen}");
    }
}

#[test]
fn getting_mated_is_reported_as_negative_mate() {
    // Black's only move is Kb8, and Rh8 mates.
    let fen = "k7/8/1K6/8/8/8/8/7R b - - 0 1";
    let result = search_depth(fen, 4);
    assert_eq!(result.score, Score::Mate(-1));
}

#[test]
fn no_move_in_mate_or_stalemate() {
    let mated = search_depth("R5k1/5ppp/8/8/8/8/8/6K1 b - - 0 1", 5);
    assert_eq!((mated.best_move, mated.score), (None, Score::Mate(0)));
    let stalemate = search_depth("k7/8/1Q6/8/8/8/8/7K b - - 0 1", 5);
    assert_eq!((stalemate.best_move, stalemate.score), (None, Score::Cp(0)));
}

#[test]
fn winning_side_avoids_stalemate() {
    // Qf7 would stalemate the lone king; the search must play for mate.
    let fen = "7k/8/6Q1/8/8/8/8/K7 w - - 0 1";
    let position = pos(fen);
    let result = search_depth(fen, 8);
    let best = result.best_move.expect("a move");
    let after = position.play(best).expect("legal");
    assert!(!after.legal_moves().is_empty(), "played stalemate {best}");
    match result.score {
        Score::Cp(cp) => assert!(cp > 500, "{cp}"),
        Score::Mate(n) => assert!(n > 0),
    }
}

/// Plays `moves` from `fen`, returning the hashes of every position before
/// the last one, and the last position.
fn history_of(fen: &str, moves: &[&str]) -> (Vec<u64>, Position) {
    let mut p = pos(fen);
    let mut hashes = Vec::new();
    for uci in moves {
        hashes.push(p.hash());
        let m = mv(&p, uci);
        p = p.play(m).expect("legal");
    }
    (hashes, p)
}

#[test]
fn losing_side_repeats_the_position() {
    // Black is a queen down. The game went Kh8 Qd2 Kg8 Qd1 and is back at
    // the start: Kh8 again repeats a game position, which the search
    // scores as a draw, far better than anything else.
    let fen = "6k1/5ppp/8/8/8/8/5PPP/3Q2K1 b - - 0 1";
    let (history, root) = history_of(fen, &["g8h8", "d1d2", "h8g8", "d2d1"]);
    assert_eq!(root.hash(), pos(fen).hash());
    let stop = AtomicBool::new(false);
    let limits = Limits {
        depth: Some(6),
        ..Limits::default()
    };
    let result = Searcher::new(16).search(&root, &history, &limits, &stop, |_| {});
    assert_eq!(result.best_move, Some(mv(&root, "g8h8")));
    assert_eq!(result.score, Score::Cp(0));
    // Without the history there is no repetition to claim.
    let fresh = Searcher::new(16).search(&root, &[], &limits, &stop, |_| {});
    assert!(
        matches!(fresh.score, Score::Cp(cp) if cp < -500),
        "{:?}",
        fresh.score
    );
}

#[test]
fn fifty_move_rule_is_seen_in_the_tree() {
    // Same material deficit, but 99 half-moves without capture or pawn
    // move: any king move ends the game drawn.
    let fen = "6k1/5ppp/8/8/8/8/5PPP/3Q2K1 b - - 99 80";
    let result = search_depth(fen, 5);
    assert_eq!(result.score, Score::Cp(0));
    let best = result.best_move.expect("a move");
    assert_eq!(
        pos(fen).role_at(best.from()),
        Some(rookery_engine::Role::King)
    );
}

#[test]
fn search_is_deterministic_at_fixed_depth() {
    for fen in [
        "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1",
        "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1",
    ] {
        let a = search_depth(fen, 7);
        let b = search_depth(fen, 7);
        assert_eq!(a, b, "{fen}");
        assert!(a.nodes > 0);
    }
}

#[test]
fn depth_and_node_limits_are_honoured() {
    let fen = "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1";
    let result = search_depth(fen, 4);
    assert_eq!(result.depth, 4);
    let stop = AtomicBool::new(false);
    let limits = Limits {
        nodes: Some(20_000),
        ..Limits::default()
    };
    let result = Searcher::new(16).search(&pos(fen), &[], &limits, &stop, |_| {});
    // Nodes are checked every 1024, so at most that much overshoot.
    assert!(result.nodes <= 20_000 + 1024, "{}", result.nodes);
    assert!(result.best_move.is_some());
}

/// Runs `f` on a thread and fails the test instead of hanging if it does
/// not finish within a generous bound.
fn with_timeout<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> T {
    let (tx, rx) = mpsc::channel();
    thread::spawn(move || {
        // The receiver only disappears if the test already failed.
        let _ = tx.send(f());
    });
    rx.recv_timeout(Duration::from_secs(60))
        .expect("search did not finish")
}

#[test]
fn stop_flag_ends_an_infinite_search_with_a_move() {
    let stop = Arc::new(AtomicBool::new(false));
    let thread_stop = Arc::clone(&stop);
    let (tx, rx) = mpsc::channel();
    let handle = thread::spawn(move || {
        let limits = Limits {
            infinite: true,
            ..Limits::default()
        };
        let mut searcher = Searcher::new(16);
        searcher.search(&Position::startpos(), &[], &limits, &thread_stop, |info| {
            // Tell the test the search is under way.
            let _ = tx.send(info.depth);
        })
    });
    rx.recv_timeout(Duration::from_secs(30))
        .expect("first iteration finishes");
    stop.store(true, Ordering::Relaxed);
    let result = with_timeout(move || handle.join().expect("search thread"));
    let best = result.best_move.expect("a move");
    assert!(Position::startpos().is_legal(best));
}

#[test]
fn stop_before_the_first_iteration_still_gives_a_legal_move() {
    let stop = AtomicBool::new(true);
    let p = pos("r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1");
    let result = Searcher::new(1).search(&p, &[], &Limits::default(), &stop, |_| {});
    assert!(p.is_legal(result.best_move.expect("a move")));
}

#[test]
fn movetime_and_clock_limits_end_the_search() {
    let fen = "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1";
    let result = with_timeout(move || {
        let stop = AtomicBool::new(false);
        let limits = Limits {
            movetime: Some(Duration::from_millis(100)),
            ..Limits::default()
        };
        Searcher::new(16).search(&pos(fen), &[], &limits, &stop, |_| {})
    });
    assert!(result.best_move.is_some());
    let result = with_timeout(move || {
        let stop = AtomicBool::new(false);
        let level = level::level(8).expect("level 8");
        let clock = Some(ClockBudget {
            remaining: Duration::from_millis(50),
            increment: Duration::ZERO,
        });
        ai::choose_move(&pos(fen), &[], level, clock, &stop)
    });
    assert!(result.is_some());
}

#[test]
fn two_threads_find_the_same_mates_and_tactics_as_one() {
    // Mates in 2 and 3, and Win At Chess 1 (Qg6: a queen sacrifice, mate
    // in 2), at fixed depth: the main thread's answer with a helper beside
    // it must be the single thread's.
    for (fen, depth) in [
        (
            "r2qkb1r/pp2nppp/3p4/2pNN1B1/2BnP3/3P4/PPP2PPP/R2bK2R w KQkq - 1 1",
            5,
        ),
        ("r5rk/5p1p/5R2/4B3/8/8/7P/7K w - - 0 1", 7),
        (
            "2rr3k/pp3pp1/1nnqbN1p/3pN3/2pP4/2P3Q1/PPB4P/R4RK1 w - - 0 1",
            9,
        ),
    ] {
        let one = search_depth(fen, depth);
        let limits = Limits {
            depth: Some(depth),
            ..Limits::default()
        };
        let stop = AtomicBool::new(false);
        let mut searcher = Searcher::new(16);
        searcher.set_threads(2);
        assert_eq!(searcher.threads(), 2);
        let two = searcher.search(&pos(fen), &[], &limits, &stop, |_| {});
        assert_eq!(
            (two.best_move, two.score),
            (one.best_move, one.score),
            "{fen}"
        );
        // The depth reported may differ: a helper thread that finishes a
        // deeper iteration first lets the search report it (Lazy SMP is
        // not deterministic), so only the answer is compared.
        assert!(
            two.depth >= 1 && two.depth <= depth,
            "{fen}: depth {}",
            two.depth
        );
    }
}

#[test]
fn one_thread_is_the_single_threaded_search() {
    // `set_threads(1)` after more threads gives back exactly the search of
    // a fresh single-threaded searcher: same move, same node count.
    let fen = "r1bqkb1r/pppp1ppp/2n2n2/4p3/2B1P3/5N2/PPPP1PPP/RNBQK2R w KQkq - 4 4";
    let alone = search_depth(fen, 8);
    let mut searcher = Searcher::new(16);
    searcher.set_threads(3);
    searcher.set_threads(1);
    let limits = Limits {
        depth: Some(8),
        ..Limits::default()
    };
    let stop = AtomicBool::new(false);
    assert_eq!(
        searcher.search(&pos(fen), &[], &limits, &stop, |_| {}),
        alone
    );
}

#[test]
fn multipv_gives_distinct_moves_best_first() {
    let fen = "r1bqkb1r/pppp1ppp/2n2n2/4p3/2B1P3/5N2/PPPP1PPP/RNBQK2R w KQkq - 4 4";
    let stop = AtomicBool::new(false);
    let limits = Limits {
        depth: Some(7),
        multipv: 3,
        ..Limits::default()
    };
    let mut infos = Vec::new();
    let result = Searcher::new(16).search(&pos(fen), &[], &limits, &stop, |info| {
        infos.push((info.depth, info.multipv));
    });
    assert_eq!(result.lines.len(), 3);
    let firsts: Vec<Move> = result.lines.iter().map(|l| l.pv[0]).collect();
    assert!(firsts[0] != firsts[1] && firsts[1] != firsts[2] && firsts[0] != firsts[2]);
    let cp = |score: Score| match score {
        Score::Cp(cp) => cp,
        Score::Mate(_) => panic!("no mate here"),
    };
    assert!(result
        .lines
        .windows(2)
        .all(|w| cp(w[0].score) >= cp(w[1].score)));
    assert_eq!(result.best_move, Some(firsts[0]));
    assert_eq!(
        (result.score, &result.pv),
        (result.lines[0].score, &result.lines[0].pv)
    );
    // One report per line and iteration, the lines in order.
    assert_eq!(infos.len(), 7 * 3);
    assert!(infos.chunks(3).all(|c| c.iter().map(|i| i.1).eq(1..=3)));
    // A position with fewer moves than asked gives a line per move.
    let limits = Limits {
        depth: Some(4),
        multipv: 5,
        ..Limits::default()
    };
    let two_moves = pos("7k/8/8/8/8/8/6q1/7K w - - 0 1");
    let result = Searcher::new(1).search(&two_moves, &[], &limits, &stop, |_| {});
    assert_eq!(result.lines.len(), two_moves.legal_moves().len());
}

#[test]
fn a_pondering_search_ignores_the_clock_until_ponderhit() {
    // A 1 ms clock would end the search at once; while pondering it does
    // not count. The search lowers the flag itself at depth 9 (the
    // ponderhit), and from then on the clock ends it.
    let fen = "r1bqkb1r/pppp1ppp/2n2n2/4p3/2B1P3/5N2/PPPP1PPP/RNBQK2R w KQkq - 4 4";
    let result = with_timeout(move || {
        let stop = AtomicBool::new(false);
        let pondering = AtomicBool::new(true);
        let limits = Limits {
            clock: Some(ClockBudget {
                remaining: Duration::from_millis(1),
                increment: Duration::ZERO,
            }),
            ..Limits::default()
        };
        let signals = Signals {
            stop: &stop,
            pondering: Some(&pondering),
        };
        Searcher::new(16).search_with(&pos(fen), &[], &limits, signals, |info| {
            if info.depth == 9 {
                pondering.store(false, Ordering::Release);
            }
        })
    });
    assert!(result.depth >= 9, "depth {}", result.depth);
}

#[test]
fn several_searches_at_once_do_not_interfere() {
    let fen = "r1bqkb1r/pppp1ppp/2n2n2/4p3/2B1P3/5N2/PPPP1PPP/RNBQK2R w KQkq - 4 4";
    let alone = search_depth(fen, 7);
    let handles: Vec<_> = (0..3)
        .map(|_| thread::spawn(move || search_depth(fen, 7)))
        .collect();
    for h in handles {
        assert_eq!(h.join().expect("search thread"), alone);
    }
}

/// A deterministic stream of positions from random playouts.
fn random_positions(count: usize, seed: u64) -> Vec<(Vec<u64>, Position)> {
    let mut state = seed;
    let mut next = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    let mut out = Vec::new();
    while out.len() < count {
        let mut p = Position::startpos();
        let mut hashes = Vec::new();
        let plies = next() % 120;
        for _ in 0..plies {
            let moves = p.legal_moves();
            if moves.is_empty() {
                break;
            }
            hashes.push(p.hash());
            p.play_unchecked(moves[(next() % moves.len() as u64) as usize]);
        }
        if !p.legal_moves().is_empty() {
            out.push((hashes, p));
        }
    }
    out
}

#[test]
fn levels_one_and_eight_play_legal_moves_everywhere() {
    let stop = AtomicBool::new(false);
    let clock = Some(ClockBudget {
        remaining: Duration::from_millis(300),
        increment: Duration::ZERO,
    });
    for (i, (history, p)) in random_positions(300, 0x5eed).into_iter().enumerate() {
        for n in [1, 8] {
            let level = level::level(n).expect("level");
            let budget = if n == 8 { clock } else { None };
            let best = ai::choose_move(&p, &history, level, budget, &stop)
                .unwrap_or_else(|| panic!("level {n} found no move in {p:?}"));
            assert!(
                p.is_legal(best),
                "position {i}: level {n} chose {best} in {p:?}"
            );
        }
    }
}

#[test]
fn handicapped_levels_vary_and_full_strength_does_not() {
    let p = pos("r1bqkb1r/pppp1ppp/2n2n2/4p3/2B1P3/5N2/PPPP1PPP/RNBQK2R w KQkq - 4 4");
    let stop = AtomicBool::new(false);
    let weak: std::collections::HashSet<_> = (0..20).map(|seed| level_move(1, &p, seed)).collect();
    assert!(weak.len() >= 3, "level 1 played only {weak:?}");
    // The same seed replays the same choice.
    assert_eq!(level_move(1, &p, 42), level_move(1, &p, 42));
    let limits = Limits {
        depth: Some(6),
        ..Limits::default()
    };
    let strong: std::collections::HashSet<_> = (0..3)
        .map(|_| {
            Searcher::new(4)
                .search(&p, &[], &limits, &stop, |_| {})
                .best_move
        })
        .collect();
    assert_eq!(strong.len(), 1);
}

/// Level `n`'s move in `p` with random seed `seed`, from a fresh searcher.
fn level_move(n: u8, p: &Position, seed: u64) -> Option<Move> {
    let limits = LEVELS[n as usize - 1].limits(None, seed);
    Searcher::new(4)
        .search(p, &[], &limits, &AtomicBool::new(false), |_| {})
        .best_move
}

/// How often level `n` plays one of `wanted` in `fen`, over 40 seeds.
fn level_plays(n: u8, fen: &str, wanted: &[&str]) -> usize {
    let p = pos(fen);
    let wanted: Vec<Move> = wanted.iter().map(|uci| mv(&p, uci)).collect();
    (0..40)
        .filter(|&seed| level_move(n, &p, seed).is_some_and(|m| wanted.contains(&m)))
        .count()
}

#[test]
fn the_weakest_level_misses_combinations_but_does_not_throw_pieces_away() {
    // Issue 12: the weak levels lose the way people do, by missing
    // tactics, not by a random blunder every few moves. Level 1 takes a
    // free queen (all 40 seeds) and mostly saves a knight a pawn attacks
    // (31 of these 40 seeds; at twice its temperature, 12)...
    let free_queen = "rnb1kbnr/pppp1ppp/8/4p1q1/3P4/2N5/PPP1PPPP/R1BQKBNR w KQkq - 0 1";
    let taken = level_plays(1, free_queen, &["c1g5"]);
    assert!(taken >= 38, "level 1 took the queen {taken}/40 times");
    let attacked_knight = "rnbqkbnr/pppp1ppp/8/8/4p3/5N2/PPPPPPPP/RNBQKB1R w KQkq - 0 3";
    let saved = level_plays(
        1,
        attacked_knight,
        &["f3d4", "f3e5", "f3g5", "f3h4", "f3g1"],
    );
    assert!(saved >= 28, "level 1 saved its knight {saved}/40 times");
    // ...but it rarely sees a combination a few moves deep (Win At Chess
    // 1 and 8: a queen sacrifice, a quiet rook move), which level 8 finds.
    for (fen, solution) in [
        (
            "2rr3k/pp3pp1/1nnqbN1p/3pN3/2pP4/2P3Q1/PPB4P/R4RK1 w - - 0 1",
            "g3g6",
        ),
        (
            "r4q1k/p2bR1rp/2p2Q1N/5p2/5p2/2P5/PP3PPP/R5K1 w - - 0 1",
            "e7f7",
        ),
    ] {
        let found = level_plays(1, fen, &[solution]);
        assert!(
            found <= 8,
            "level 1 found {solution} {found}/40 times in {fen}"
        );
        // Depth 8: since the table's score steers the pruning (29
        // November, +22 Elo (+3 .. +41) over 800 games at 20,000 nodes a
        // move) the full search finds
        // Qg6 at depth 8, a ply later than before (Rf7 still at depth 6).
        assert_eq!(
            search_depth(fen, 8).best_move,
            Some(mv(&pos(fen), solution))
        );
    }
}

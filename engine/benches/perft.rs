//! Perft speed of Rookery against cozy-chess and shakmaty, in one run.
//!
//! ```text
//! cargo bench -p rookery-engine --bench perft            # about 800 M nodes per library
//! cargo bench -p rookery-engine --bench perft -- 20000000 # smaller: max nodes per position
//! cargo bench -p rookery-engine --bench perft -- 2000000 cozy # one library alone
//! ```
//!
//! Naming one library (`rookery`, `cozy` or `shakmaty`) runs its perft
//! alone, with nothing else in the process: for counting its instructions
//! under `valgrind --tool=callgrind`, a measure that the machine's load
//! does not change (`tools/perft-instructions.sh`).
//!
//! Every library runs the same perft: one thread, no hash table, bulk
//! counting at the last ply (the number of legal moves is counted, not
//! played), copy-make for the interior nodes. The positions are the
//! standard suite of `tests/data/perft.epd`, each at the deepest depth whose
//! node count stays under the limit (default 200 M), and every count is
//! checked against the suite, so a fast wrong generator cannot win.
//!
//! Why a plain `harness = false` bench and not criterion: a perft run is
//! seconds long and its variance is small, so criterion's statistics add
//! nothing but compile time on a shared two-core machine, and the point is
//! one table with three libraries side by side. It builds with the `bench`
//! profile (release settings, no `target-cpu=native`): a portable build.

use std::time::{Duration, Instant};

use cozy_chess::Board;
use shakmaty::fen::Fen;
use shakmaty::{CastlingMode, Chess, Position as _};

use rookery_engine::Position;

fn rookery_perft(pos: &Position, depth: u32) -> u64 {
    rookery_engine::perft::perft(pos, depth)
}

fn cozy_perft(board: &Board, depth: u32) -> u64 {
    let mut nodes = 0;
    if depth == 1 {
        board.generate_moves(|moves| {
            nodes += moves.len() as u64;
            false
        });
    } else {
        board.generate_moves(|moves| {
            for mv in moves {
                let mut child = board.clone();
                child.play_unchecked(mv);
                nodes += cozy_perft(&child, depth - 1);
            }
            false
        });
    }
    nodes
}

fn shakmaty_perft(pos: &Chess, depth: u32) -> u64 {
    let moves = pos.legal_moves();
    if depth == 1 {
        return moves.len() as u64;
    }
    moves
        .iter()
        .map(|mv| {
            let mut child = pos.clone();
            child.play_unchecked(mv);
            shakmaty_perft(&child, depth - 1)
        })
        .sum()
}

struct Case {
    id: String,
    fen: String,
    depth: u32,
    nodes: u64,
}

fn cases(max_nodes: u64) -> Vec<Case> {
    include_str!("../tests/data/perft.epd")
        .lines()
        .filter(|l| !l.trim().is_empty() && !l.starts_with('#'))
        .filter_map(|line| {
            let mut fields = line.split(';').map(str::trim);
            let fen = fields.next()?.to_string();
            let mut id = String::new();
            let mut best = None;
            for field in fields {
                if let Some(name) = field.strip_prefix("id ") {
                    id = name.to_string();
                } else if let Some((depth, nodes)) =
                    field.strip_prefix('D').and_then(|r| r.split_once(' '))
                {
                    let (depth, nodes): (u32, u64) = (depth.parse().ok()?, nodes.parse().ok()?);
                    if nodes <= max_nodes && best.is_none_or(|(d, _)| depth > d) {
                        best = Some((depth, nodes));
                    }
                }
            }
            let (depth, nodes) = best?;
            Some(Case {
                id,
                fen,
                depth,
                nodes,
            })
        })
        .collect()
}

fn timed(expected: u64, run: impl FnOnce() -> u64, who: &str, case: &str) -> Duration {
    let start = Instant::now();
    let nodes = run();
    let elapsed = start.elapsed();
    assert_eq!(nodes, expected, "{who} miscounts {case}");
    elapsed
}

fn mnps(nodes: u64, time: Duration) -> f64 {
    nodes as f64 / time.as_secs_f64() / 1e6
}

fn main() {
    // `cargo bench` passes `--bench`; a bare number is the node limit.
    let max_nodes = std::env::args()
        .skip(1)
        .find_map(|a| a.parse::<u64>().ok())
        .unwrap_or(200_000_000);
    let cases = cases(max_nodes);
    if let Some(library) = std::env::args()
        .skip(1)
        .find(|a| ["rookery", "cozy", "shakmaty"].contains(&a.as_str()))
    {
        alone(&library, &cases);
        return;
    }
    println!(
        "{:<10} {:>5} {:>12} {:>14} {:>14} {:>14}",
        "position", "depth", "nodes", "rookery Mn/s", "cozy Mn/s", "shakmaty Mn/s"
    );
    let mut total_nodes = 0;
    let mut totals = [Duration::ZERO; 3];
    for case in &cases {
        let ours = Position::from_fen(&case.fen).expect("suite FEN");
        let cozy: Board = Board::from_fen(&case.fen, false).expect("cozy FEN");
        let theirs: Chess = case
            .fen
            .parse::<Fen>()
            .expect("shakmaty FEN")
            .into_position(CastlingMode::Standard)
            .expect("shakmaty position");
        let times = [
            timed(
                case.nodes,
                || rookery_perft(&ours, case.depth),
                "rookery",
                &case.id,
            ),
            timed(
                case.nodes,
                || cozy_perft(&cozy, case.depth),
                "cozy-chess",
                &case.id,
            ),
            timed(
                case.nodes,
                || shakmaty_perft(&theirs, case.depth),
                "shakmaty",
                &case.id,
            ),
        ];
        println!(
            "{:<10} {:>5} {:>12} {:>14.1} {:>14.1} {:>14.1}",
            case.id,
            case.depth,
            case.nodes,
            mnps(case.nodes, times[0]),
            mnps(case.nodes, times[1]),
            mnps(case.nodes, times[2]),
        );
        total_nodes += case.nodes;
        for (total, time) in totals.iter_mut().zip(times) {
            *total += time;
        }
    }
    println!(
        "{:<10} {:>5} {:>12} {:>14.1} {:>14.1} {:>14.1}",
        "total",
        "",
        total_nodes,
        mnps(total_nodes, totals[0]),
        mnps(total_nodes, totals[1]),
        mnps(total_nodes, totals[2]),
    );
    let speed = |i: usize| mnps(total_nodes, totals[i]);
    println!(
        "rookery / cozy-chess = {:.2}x, rookery / shakmaty = {:.2}x",
        speed(0) / speed(1),
        speed(0) / speed(2)
    );
    copy_make_costs(&cases);
}

/// Runs one library's perft over `cases`, every count checked, and prints
/// the leaves and the time.
fn alone(library: &str, cases: &[Case]) {
    let mut nodes = 0;
    let mut time = Duration::ZERO;
    for case in cases {
        time += match library {
            "rookery" => {
                let pos = Position::from_fen(&case.fen).expect("suite FEN");
                timed(
                    case.nodes,
                    || rookery_perft(&pos, case.depth),
                    library,
                    &case.id,
                )
            }
            "cozy" => {
                let board = Board::from_fen(&case.fen, false).expect("cozy FEN");
                timed(
                    case.nodes,
                    || cozy_perft(&board, case.depth),
                    library,
                    &case.id,
                )
            }
            _ => {
                let pos: Chess = case
                    .fen
                    .parse::<Fen>()
                    .expect("shakmaty FEN")
                    .into_position(CastlingMode::Standard)
                    .expect("shakmaty position");
                timed(
                    case.nodes,
                    || shakmaty_perft(&pos, case.depth),
                    library,
                    &case.id,
                )
            }
        };
        nodes += case.nodes;
    }
    println!("{library}: {nodes} leaves in {time:?}");
}

/// What copy-make costs: the copy of a `Position` alone, and the copy plus
/// the move, averaged over every legal move of the suite's positions; set
/// against the share of interior nodes (the only ones that copy) in perft.
fn copy_make_costs(cases: &[Case]) {
    const ROUNDS: u32 = 200_000;
    let pairs: Vec<(Position, rookery_engine::Move)> = cases
        .iter()
        .flat_map(|case| {
            let pos = Position::from_fen(&case.fen).expect("suite FEN");
            pos.legal_moves()
                .into_iter()
                .map(move |mv| (pos.clone(), mv))
        })
        .collect();
    let start = Instant::now();
    for _ in 0..ROUNDS {
        for (pos, _) in &pairs {
            std::hint::black_box(std::hint::black_box(pos).clone());
        }
    }
    let copy = start.elapsed().as_secs_f64() * 1e9 / (ROUNDS as f64 * pairs.len() as f64);
    let start = Instant::now();
    for _ in 0..ROUNDS {
        for (pos, mv) in &pairs {
            let mut child = std::hint::black_box(pos).clone();
            child.play_unchecked(*mv);
            std::hint::black_box(child);
        }
    }
    let make = start.elapsed().as_secs_f64() * 1e9 / (ROUNDS as f64 * pairs.len() as f64);
    let interior: u64 = cases
        .iter()
        .map(|case| {
            let pos = Position::from_fen(&case.fen).expect("suite FEN");
            (1..case.depth).map(|d| rookery_perft(&pos, d)).sum::<u64>()
        })
        .sum();
    let leaves: u64 = cases.iter().map(|case| case.nodes).sum();
    println!(
        "copy-make: copy {copy:.2} ns + play {:.2} ns per move ({} bytes per position); \
         perft plays {interior} interior nodes for {leaves} leaves ({:.1}%)",
        make - copy,
        std::mem::size_of::<Position>(),
        100.0 * interior as f64 / leaves as f64,
    );
}

//! Positions for the targets that need one: a seed position picked by the
//! input, then a short playout of legal moves the input also chooses. The
//! seeds are the perft suite (castling, en passant and promotions in every
//! corner) and a few positions where SAN needs disambiguation; playouts
//! reach positions no fixed list holds.

use std::sync::OnceLock;

use rookery_engine::{Game, Position};

const PERFT_SUITE: &str = include_str!("../../engine/tests/data/perft.epd");

/// Positions where several pieces of a kind reach the same squares, so SAN
/// needs origin files, ranks or both, and promotions that capture.
const EXTRA: [&str; 4] = [
    "k7/8/8/3Q1Q2/8/3Q1Q2/8/K7 w - - 0 1",
    "1n1n3k/P1P5/8/8/8/8/8/K7 w - - 0 1",
    "7k/8/8/8/R6R/8/8/R3K2R w KQ - 0 1",
    "r3k2r/1P4P1/8/2N1N3/8/2N1N3/1p4p1/R3K2R b KQkq - 0 1",
];

/// Parsed once per run: reading them again on every input would cost more
/// than most inputs do.
fn seeds() -> &'static [Position] {
    static SEEDS: OnceLock<Vec<Position>> = OnceLock::new();
    SEEDS.get_or_init(|| {
        PERFT_SUITE
            .lines()
            .filter(|line| !line.starts_with('#') && !line.trim().is_empty())
            .filter_map(|line| line.split(';').next())
            .chain(EXTRA)
            .filter_map(|fen| Position::from_fen(fen.trim()).ok())
            .collect()
    })
}

/// Reads `[seed, plies, choice...]` from the front of `data` and returns the
/// game reached and the rest of the input. Short inputs give the first seed.
pub fn game_from(data: &[u8]) -> (Game, &[u8]) {
    let seeds = seeds();
    let (&seed, rest) = data.split_first().unwrap_or((&0, &[]));
    let (&plies, mut rest) = rest.split_first().unwrap_or((&0, &[]));
    let mut game = Game::new(seeds[usize::from(seed) % seeds.len()].clone());
    for _ in 0..plies % 64 {
        let Some((&choice, tail)) = rest.split_first() else {
            break;
        };
        rest = tail;
        let moves = game.position().legal_moves();
        if moves.is_empty() || game.outcome().is_some() {
            break;
        }
        let mv = moves[usize::from(choice) % moves.len()];
        if let Err(e) = game.play(mv) {
            panic!(
                "{}: generated move {mv} is illegal: {e}",
                game.position().to_fen()
            );
        }
    }
    (game, rest)
}

//! Perft: counting the leaf nodes of the legal-move tree to a fixed depth.
//! The standard proof of a move generator, and a benchmark for it.

use crate::moves::Move;
use crate::position::Position;

/// Leaf nodes at `depth`, counting the last ply in bulk (no make-move there).
pub fn perft(pos: &Position, depth: u32) -> u64 {
    match depth {
        0 => 1,
        1 => pos.count_legal_moves(),
        _ => pos
            .legal_moves()
            .into_iter()
            .map(|mv| {
                let mut child = pos.clone();
                child.play_unchecked(mv);
                perft(&child, depth - 1)
            })
            .sum(),
    }
}

/// Perft split by root move, in generation order ("divide").
pub fn divide(pos: &Position, depth: u32) -> Vec<(Move, u64)> {
    if depth == 0 {
        return Vec::new();
    }
    pos.legal_moves()
        .into_iter()
        .map(|mv| {
            let mut child = pos.clone();
            child.play_unchecked(mv);
            (mv, perft(&child, depth - 1))
        })
        .collect()
}

//! Perft: counting the leaf nodes of the legal-move tree to a fixed depth.
//! The standard proof of a move generator, and a benchmark for it.
//!
//! The last ply is counted in bulk: one population count per batch of
//! moves (see `movegen`), so perft spends much of its time in `popcnt`.
//! The portable x86-64 build may not assume that instruction (its
//! `count_ones` is a dozen shifts and adds), so on a CPU that has it the
//! whole recursion runs in a copy compiled with it, chosen once per call.

use crate::moves::Move;
use crate::position::Position;

/// Leaf nodes at `depth`, counting the last ply in bulk (no make-move there).
pub fn perft(pos: &Position, depth: u32) -> u64 {
    #[cfg(target_arch = "x86_64")]
    if std::is_x86_feature_detected!("popcnt") {
        // SAFETY: the CPU has the one feature the copy is compiled with.
        return unsafe { perft_popcnt(pos, depth) };
    }
    perft_portable(pos, depth)
}

/// Perft with whatever the build's target allows.
pub(crate) fn perft_portable(pos: &Position, depth: u32) -> u64 {
    perft_step(pos, depth, perft_portable)
}

/// The same recursion, compiled with `popcnt`; `perft_step`, the move
/// generator and the counting are inlined into it, so they use it too.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "popcnt")]
fn perft_popcnt(pos: &Position, depth: u32) -> u64 {
    perft_step(pos, depth, |child, depth| perft_popcnt(child, depth))
}

/// One node of perft; `deeper` counts a child.
#[inline(always)]
fn perft_step(pos: &Position, depth: u32, deeper: impl Fn(&Position, u32) -> u64) -> u64 {
    match depth {
        0 => 1,
        1 => pos.count_legal_moves(),
        _ => pos
            .legal_moves()
            .into_iter()
            .map(|mv| {
                let mut child = pos.clone();
                child.play_unchecked(mv);
                deeper(&child, depth - 1)
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

#[cfg(test)]
mod tests {
    use super::*;

    /// Both copies count the same tree (the popcnt one where the CPU has it).
    #[test]
    fn the_dispatched_and_portable_copies_agree() {
        let kiwipete = "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1";
        let pos = Position::from_fen(kiwipete).expect("a valid FEN");
        assert_eq!(perft_portable(&pos, 3), 97_862);
        assert_eq!(perft(&pos, 3), 97_862);
    }
}

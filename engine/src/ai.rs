//! The computer player's entry point for hosts such as the server: pick a
//! move for a level, within a time budget, stoppable from another thread.
//!
//! PLACEHOLDER SEARCH: until the real alpha-beta search lands (AI issue),
//! [`choose_move`] runs a one-ply material grab. It is named and documented as
//! a placeholder; the signature is the one the server builds on.

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use crate::level::Level;
use crate::moves::Move;
use crate::position::Position;
use crate::types::Role;

/// Time the computer seat has on its clock, if the game has one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ClockBudget {
    pub remaining: Duration,
    pub increment: Duration,
}

/// Chooses a move for `level` in `position`. `history` holds the Zobrist
/// hashes of the earlier positions of the game (oldest first), so a search
/// can recognise repetitions. Returns `None` only when there is no legal move
/// or `stop` was raised before any move was chosen.
pub fn choose_move(
    position: &Position,
    history: &[u64],
    level: &Level,
    clock: Option<ClockBudget>,
    stop: &AtomicBool,
) -> Option<Move> {
    let _ = (history, level, clock); // the placeholder ignores them
    if stop.load(Ordering::Relaxed) {
        return None;
    }
    placeholder_material_grab(position)
}

/// Placeholder: the move that captures the most material, else the first
/// legal move.
fn placeholder_material_grab(position: &Position) -> Option<Move> {
    let value = |role: Option<Role>| match role {
        Some(Role::Pawn) => 1,
        Some(Role::Knight | Role::Bishop) => 3,
        Some(Role::Rook) => 5,
        Some(Role::Queen) => 9,
        _ => 0,
    };
    position
        .legal_moves()
        .into_iter()
        .max_by_key(|mv| value(position.role_at(mv.to())) + value(mv.promotion()))
}

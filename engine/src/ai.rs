//! The computer player's entry point for hosts such as the server: pick a
//! move for a level, within a time budget, stoppable from another thread.
//!
//! [`choose_move`] is the one-call form; hosts that play many moves in a row
//! can keep a [`Searcher`] per game and call [`choose_move_with`], so the
//! transposition table carries over between moves.

use std::sync::atomic::AtomicBool;
use std::time::{SystemTime, UNIX_EPOCH};

use crate::level::Level;
use crate::moves::Move;
use crate::nnue;
use crate::position::Position;
use crate::search::Searcher;

/// Time the computer seat has on its clock: the search's own clock type,
/// re-exported here for hosts.
pub use crate::search::ClockBudget;

/// Table size for one-off searches: big enough for a few seconds of
/// thinking, small enough that allocating it per move is cheap.
const ONE_OFF_HASH_MB: usize = 8;

/// Chooses a move for `level` in `position`. `history` holds the Zobrist
/// hashes of the earlier positions of the game (oldest first; a trailing
/// hash of `position` itself is ignored), so the search can recognise
/// repetitions. Returns `None` only when there is no legal move. If `stop`
/// is raised the search ends at once and the best move found so far (at
/// worst the first legal move) is returned.
pub fn choose_move(
    position: &Position,
    history: &[u64],
    level: &Level,
    clock: Option<ClockBudget>,
    stop: &AtomicBool,
) -> Option<Move> {
    let mut searcher = Searcher::new(ONE_OFF_HASH_MB);
    choose_move_with(&mut searcher, position, history, level, clock, stop)
}

/// [`choose_move`] with a caller-owned [`Searcher`].
pub fn choose_move_with(
    searcher: &mut Searcher,
    position: &Position,
    history: &[u64],
    level: &Level,
    clock: Option<ClockBudget>,
    stop: &AtomicBool,
) -> Option<Move> {
    let limits = level.limits(clock, fresh_seed(position));
    searcher.set_network(level.network.then(nnue::built_in));
    searcher
        .search(position, history, &limits, stop, |_| {})
        .best_move
}

/// A seed that differs from game to game and move to move.
fn fresh_seed(position: &Position) -> u64 {
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as u64);
    nanos ^ position.hash().rotate_left(17)
}

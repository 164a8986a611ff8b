//! What a search reports: the score, progress after each iteration, and the
//! final result.

use std::fmt;
use std::time::Duration;

use super::{MATE, MATE_BOUND};
use crate::moves::Move;

/// A score as reported to the outside.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Score {
    /// Centipawns from the side to move's point of view.
    Cp(i32),
    /// Mate in this many moves (negative: the side to move gets mated).
    Mate(i32),
}

impl Score {
    pub(super) fn from_internal(value: i32) -> Score {
        if value >= MATE_BOUND {
            Score::Mate((MATE - value + 1) / 2)
        } else if value <= -MATE_BOUND {
            Score::Mate(-(MATE + value) / 2)
        } else {
            Score::Cp(value)
        }
    }
}

impl fmt::Display for Score {
    /// UCI spelling: `cp 35` or `mate -3`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Score::Cp(cp) => write!(f, "cp {cp}"),
            Score::Mate(moves) => write!(f, "mate {moves}"),
        }
    }
}

/// Progress after each finished iteration (UCI `info` lines).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Info {
    pub depth: u32,
    pub seldepth: u32,
    /// Which line this is, 1 for the best (UCI `multipv`).
    pub multipv: u32,
    pub score: Score,
    pub nodes: u64,
    pub time: Duration,
    pub hashfull: u32,
    pub pv: Vec<Move>,
}

impl Info {
    pub fn nps(&self) -> u64 {
        let micros = self.time.as_micros().max(1);
        (self.nodes as u128 * 1_000_000 / micros) as u64
    }
}

/// The outcome of a search.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SearchResult {
    /// `None` only when the side to move has no legal move.
    pub best_move: Option<Move>,
    pub score: Score,
    /// Depth of the last finished iteration.
    pub depth: u32,
    pub nodes: u64,
    pub pv: Vec<Move>,
    /// The best lines of the last iteration, best first: as many as
    /// [`super::Limits::multipv`] asked for (fewer if the position has
    /// fewer moves or a stop cut the iteration short), and always at least
    /// one when there is a legal move. Under a handicap `best_move` may be
    /// another move than the first line's.
    pub lines: Vec<PvLine>,
}

/// One line of a MultiPV search: a root move's score and its principal
/// variation, the move first.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PvLine {
    pub score: Score,
    pub pv: Vec<Move>,
}

//! What the caller asks of a search: its limits, the clock they may come
//! from, and the signals that reach it while it runs.

use std::sync::atomic::AtomicBool;
use std::time::Duration;

use super::handicap::Handicap;

/// The time one side has left on its clock. The one clock type of the
/// engine: hosts (the server's AI seats, UCI's `wtime`/`winc`) hand it to a
/// level or a search, and [`super::time::TimeBudget`] turns it into limits.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ClockBudget {
    pub remaining: Duration,
    pub increment: Duration,
}

/// What limits one search. All unset means "think until stopped".
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Limits {
    pub depth: Option<u32>,
    pub nodes: Option<u64>,
    pub movetime: Option<Duration>,
    /// The side to move's clock.
    pub clock: Option<ClockBudget>,
    /// Moves until the next time control, if the game has one (UCI
    /// `movestogo`); only read together with `clock`.
    pub moves_to_go: Option<u32>,
    /// Search until stopped, whatever the other limits say about time.
    pub infinite: bool,
    /// Upper bound on thinking time whatever the clock allows.
    pub max_time: Option<Duration>,
    pub handicap: Option<Handicap>,
    /// How many of the best root moves to search exactly, each with its own
    /// line (UCI `MultiPV`; post-game analysis's "better moves"). 0 and 1
    /// both mean only the best. More lines cost time: each is a search of
    /// the moves the earlier lines left.
    pub multipv: usize,
    /// Kept back from the clock and from `movetime` for the time the move
    /// takes to reach the arbiter (UCI `Move Overhead`); `None`:
    /// [`super::time::DEFAULT_MOVE_OVERHEAD`].
    pub move_overhead: Option<Duration>,
}

/// What a host can tell a running search.
#[derive(Clone, Copy, Debug)]
pub struct Signals<'a> {
    /// Raised: stop now and answer with the best move found so far.
    pub stop: &'a AtomicBool,
    /// `Some` for a pondering search (UCI `go ponder`: thinking on the
    /// opponent's time, on the move the engine expects). While the flag is
    /// raised no time limit applies; lowering it (`ponderhit`: the
    /// opponent played that move) starts the clock, and the time limits
    /// count from then.
    pub pondering: Option<&'a AtomicBool>,
}

impl<'a> Signals<'a> {
    /// Only a stop flag: the clock runs from the start.
    pub fn stop(stop: &'a AtomicBool) -> Signals<'a> {
        Signals {
            stop,
            pondering: None,
        }
    }
}

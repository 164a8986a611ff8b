//! What the caller asks of a search: its limits, and the clock they may
//! come from.

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
}

//! Time management: how long to think about one move.
//!
//! Two limits come out of the clock. The *soft* limit is checked between
//! iterations of iterative deepening: past it, starting another iteration is
//! probably a waste, since each takes longer than all before it together. The
//! *hard* limit is checked inside the search (every thousand nodes or so) and
//! aborts it; the best move of the last finished iteration is played.

use std::time::Duration;

use super::Limits;

/// Kept back from every clock reading for the time it takes the move to
/// travel to the arbiter (GUI, server, match script) and for scheduling noise.
const MOVE_OVERHEAD: Duration = Duration::from_millis(50);

/// The time limits of one search; `None` means unlimited.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TimeBudget {
    pub soft: Option<Duration>,
    pub hard: Option<Duration>,
}

impl TimeBudget {
    pub fn from_limits(limits: &Limits) -> TimeBudget {
        if limits.infinite {
            return TimeBudget {
                soft: None,
                hard: None,
            };
        }
        let mut budget = TimeBudget {
            soft: None,
            hard: None,
        };
        if let Some(clock) = limits.clock {
            let remaining = clock.remaining;
            let overhead = MOVE_OVERHEAD.min(remaining / 4);
            let available = remaining.saturating_sub(overhead);
            // Assume the game lasts another 25 moves unless told otherwise;
            // the increment is almost all ours to spend again.
            let moves_left = limits.moves_to_go.map_or(25, |m| m.clamp(1, 40) + 1);
            let target = available / moves_left + clock.increment * 3 / 4;
            // Never more than a third of what is left: on a busy machine
            // the time between our answer and the clock stopping varies,
            // and a short clock must be able to absorb that.
            let hard = (target * 4)
                .min(available / 3)
                .max(Duration::from_millis(1));
            budget.soft = Some((target / 2).min(hard));
            budget.hard = Some(hard);
        }
        if let Some(movetime) = limits.movetime {
            let hard = movetime
                .saturating_sub(MOVE_OVERHEAD.min(movetime / 5))
                .max(Duration::from_millis(1));
            budget.hard = Some(budget.hard.map_or(hard, |h| h.min(hard)));
            budget.soft = Some(budget.soft.map_or(hard, |s| s.min(hard)));
        }
        budget
    }

    /// Never think longer than `cap` (difficulty levels keep games lively).
    /// Without a clock, the cap is all there is: then iterations stop
    /// being started past half of it, so a move usually comes well before.
    pub fn capped(self, cap: Option<Duration>) -> TimeBudget {
        let Some(cap) = cap else { return self };
        TimeBudget {
            soft: Some(self.soft.map_or(cap / 2, |s| s.min(cap))),
            hard: Some(self.hard.map_or(cap, |h| h.min(cap))),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::search::ClockBudget;

    fn clock(ms: u64, inc: u64, moves_to_go: Option<u32>) -> Limits {
        Limits {
            clock: Some(ClockBudget {
                remaining: Duration::from_millis(ms),
                increment: Duration::from_millis(inc),
            }),
            moves_to_go,
            ..Limits::default()
        }
    }

    #[test]
    fn spends_a_fraction_of_the_clock() {
        let b = TimeBudget::from_limits(&clock(60_000, 0, None));
        let hard = b.hard.expect("clock gives a hard limit");
        let soft = b.soft.expect("clock gives a soft limit");
        assert!(soft <= hard);
        assert!(hard <= Duration::from_millis(30_000));
        assert!(soft >= Duration::from_millis(500));
    }

    #[test]
    fn never_plans_beyond_a_tiny_clock() {
        for ms in [0, 1, 5, 20, 100, 1000] {
            let b = TimeBudget::from_limits(&clock(ms, 10, None));
            let hard = b.hard.expect("hard limit");
            assert!(
                hard <= Duration::from_millis(ms / 3 + 1).max(Duration::from_millis(1)),
                "{ms} ms: {hard:?}"
            );
        }
    }

    #[test]
    fn movetime_and_infinite() {
        let limits = Limits {
            movetime: Some(Duration::from_millis(1000)),
            ..Limits::default()
        };
        let b = TimeBudget::from_limits(&limits);
        assert_eq!(b.hard, Some(Duration::from_millis(950)));
        let limits = Limits {
            infinite: true,
            ..Limits::default()
        };
        assert_eq!(TimeBudget::from_limits(&limits).hard, None);
        let capped =
            TimeBudget::from_limits(&Limits::default()).capped(Some(Duration::from_millis(5)));
        assert_eq!(capped.hard, Some(Duration::from_millis(5)));
    }
}

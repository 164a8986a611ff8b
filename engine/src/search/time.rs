//! Time management: how long to think about one move.
//!
//! Two limits come out of the clock, the way strong engines split it. The
//! *soft* limit is the time to aim for. It is checked between iterations of
//! iterative deepening, scaled by what the iterations so far say
//! ([`Trend`]): a best move that keeps changing, a falling score or
//! alternatives that take most of an iteration's nodes to refute earn up
//! to twice the soft limit; a best move that has stood for many iterations
//! while everything else was refuted cheaply is played after half of it.
//! The *hard* limit is checked inside the search (every thousand nodes or
//! so) and aborts it; the best move of the last finished iteration is
//! played.
//!
//! The soft limit shares the clock over a horizon of moves, as Stockfish
//! does: what is left, plus the increments still to come over the
//! horizon, minus a reserve for the overhead of every one of those moves,
//! divided by the horizon. The more is left, the more a move gets, so the
//! opening and middlegame, where games are decided, get the largest share;
//! as the clock runs down the reserve weighs more, and a clock near the
//! reserve is rebuilt from the increment (moves take less than it) instead
//! of being spent to the last tenth of a second, which a busy machine
//! punishes. (The first version aimed at half of that share and stretched
//! it only for a changing best move: 0.17 s a move over the first 20 at
//! 5 s + 0.05 s, where Stockfish spends 0.30 s; see `tools/calibration.md`,
//! "Time management".)

use std::time::Duration;

use super::{Limits, MATE_BOUND};
use crate::moves::Move;

/// Kept back from every clock reading for the time it takes the move to
/// travel to the arbiter (GUI, server, match script) and for scheduling
/// noise, unless the host says otherwise ([`Limits::move_overhead`], UCI
/// `Move Overhead`). 50 ms is what time management was measured with
/// (`tools/calibration.md`, "Time management"); Stockfish's default is
/// 10 ms, lichess-bot's configuration asks for 100 ms.
pub const DEFAULT_MOVE_OVERHEAD: Duration = Duration::from_millis(50);

/// Without `movestogo`, the clock is shared as if this many moves were left.
/// Measured in self-play at 5 s + 0.05 s: 16 (more time early) lost 38
/// Elo, 25 was level (`tools/calibration.md`, thirteenth session).
const HORIZON: u32 = 20;

/// The hard limit is at most this many soft limits …
const HARD_PER_SOFT: u32 = 5;

/// The time limits of one search; `None` means unlimited.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TimeBudget {
    /// The time to aim for, scaled between iterations by [`Trend::scale`].
    pub soft: Option<Duration>,
    /// Never longer than this.
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
        let move_overhead = limits.move_overhead.unwrap_or(DEFAULT_MOVE_OVERHEAD);
        if let Some(clock) = limits.clock {
            let remaining = clock.remaining;
            // However large the overhead, three quarters of the clock stay
            // usable: a move must still come (the hard limit below is at
            // most a third of what is left).
            let overhead = move_overhead.min(remaining / 4);
            let available = remaining.saturating_sub(overhead);
            let moves_left = limits.moves_to_go.map_or(HORIZON, |m| m.clamp(1, 40) + 1);
            let time_left = (remaining + clock.increment * (moves_left - 1))
                .saturating_sub(move_overhead.saturating_mul(moves_left + 2))
                // Without an increment the reserve can eat it all: a
                // quarter of the clock is always shared out.
                .max(available / 4);
            let soft = time_left / moves_left;
            // … and never more than a third of what is left: on a busy
            // machine the time between our answer and the clock stopping
            // varies, and a short clock must be able to absorb that.
            let hard = (soft * HARD_PER_SOFT)
                .min(available / 3)
                .max(Duration::from_millis(1));
            budget.soft = Some(soft.min(hard));
            budget.hard = Some(hard);
        }
        if let Some(movetime) = limits.movetime {
            let hard = movetime
                .saturating_sub(move_overhead.min(movetime / 5))
                .max(Duration::from_millis(1));
            budget.hard = Some(budget.hard.map_or(hard, |h| h.min(hard)));
            // `movetime` asks for exactly that long: no soft limit of its
            // own, which the search's trend would shorten.
            budget.soft = budget.soft.map(|s| s.min(hard));
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

/// What the finished iterations say about the position, for the soft
/// limit: how long the best move has stood, how the score moves, and how
/// much of the root's effort the best move takes.
#[derive(Clone, Debug, Default)]
pub(super) struct Trend {
    best: Option<Move>,
    /// Iterations in a row that ended on the same best move.
    stable: u32,
    /// Changes of the best move, each halved at every further iteration,
    /// so recent ones weigh most.
    changes: f64,
    /// The score of each finished iteration, oldest first.
    scores: Vec<i32>,
    /// Share of the last iteration's root nodes spent below the best
    /// move, 0 to 1.
    best_share: f64,
    /// The root has only one legal move.
    forced: bool,
}

impl Trend {
    pub(super) fn new(legal_moves: usize) -> Trend {
        Trend {
            forced: legal_moves == 1,
            ..Trend::default()
        }
    }

    /// Records a finished iteration.
    pub(super) fn record(&mut self, best: Move, score: i32, best_share: f64) {
        self.changes /= 2.0;
        if self.best == Some(best) {
            self.stable += 1;
        } else {
            if self.best.is_some() {
                self.changes += 1.0;
            }
            self.stable = 0;
        }
        self.best = Some(best);
        self.scores.push(score);
        self.best_share = best_share;
    }

    /// How many soft limits to spend, from what the iterations showed.
    pub(super) fn scale(&self) -> f64 {
        if self.forced {
            // Nothing to decide: answer after the first iteration or two.
            return 0.05;
        }
        // A best move that has stood for ten iterations is likely to stay;
        // one that has just changed, or keeps changing, is not.
        let stability = (1.25 - 0.05 * self.stable.min(10) as f64) * (1.0 + 0.4 * self.changes);
        // When the alternatives were refuted cheaply the best move took
        // most of the last iteration's nodes, and the choice is easy; when
        // they needed a real search (they nearly were better), it is not.
        let effort = (1.5 - self.best_share).clamp(0.75, 1.3);
        (stability * effort * self.falling_score()).clamp(0.5, 2.0)
    }

    /// More time when the score drops: the search has just found trouble,
    /// and a deeper look may find the way out. Measured against the last
    /// iteration and against the average of the last four; mate scores are
    /// left out (a found mate ends the search anyway).
    fn falling_score(&self) -> f64 {
        let Some((&now, before)) = self.scores.split_last() else {
            return 1.0;
        };
        let recent = &before[before.len().saturating_sub(4)..];
        if recent.is_empty()
            || now.abs() >= MATE_BOUND
            || recent.iter().any(|s| s.abs() >= MATE_BOUND)
        {
            return 1.0;
        }
        let last = recent[recent.len() - 1];
        let average = recent.iter().sum::<i32>() / recent.len() as i32;
        let drop = (last - now) + (average - now);
        (1.0 + drop as f64 / 100.0).clamp(0.8, 1.6)
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
    fn shares_the_clock_early_and_keeps_a_reserve_late() {
        let soft = |ms, inc| {
            let b = TimeBudget::from_limits(&clock(ms, inc, None));
            b.soft.expect("soft limit").as_secs_f64()
        };
        // 5 s + 0.05 s at the start: (5 + 19 × 0.05 − 22 × 0.05) / 20.
        assert!((soft(5_000, 50) - 0.2425).abs() < 1e-9);
        // More left, more a move: the share shrinks with the clock.
        assert!(soft(5_000, 50) > soft(3_000, 50) && soft(3_000, 50) > soft(1_500, 50));
        // Near the reserve a move takes less than the increment, so the
        // clock grows back instead of running down to nothing.
        assert!(soft(1_000, 50) < 0.05);
        // Without an increment a quarter of the clock is still shared.
        assert!((soft(1_000, 0) - 0.95 / 4.0 / 20.0).abs() < 1e-9);
    }

    #[test]
    fn a_settled_search_stops_sooner_than_an_unsettled_one() {
        let (a, b) = (Move::from_bits(0x0123), Move::from_bits(0x0456));
        let mut settled = Trend::new(20);
        for _ in 0..12 {
            settled.record(a, 30, 0.9);
        }
        assert!(settled.scale() < 0.6, "{}", settled.scale());
        // The best move changes every iteration and the alternatives take
        // half the nodes.
        let mut unsettled = Trend::new(20);
        for i in 0..12 {
            unsettled.record(if i % 2 == 0 { a } else { b }, 30, 0.5);
        }
        assert_eq!(unsettled.scale(), 2.0);
        // A falling score earns time; a mate score says nothing.
        let mut falling = settled.clone();
        falling.record(a, -30, 0.9);
        assert!(falling.scale() > settled.scale() * 1.5);
        let mut mate = settled.clone();
        mate.record(a, MATE_BOUND + 5, 0.9);
        assert_eq!(mate.falling_score(), 1.0);
        // One legal move: nothing to think about.
        let mut forced = Trend::new(1);
        forced.record(a, 0, 1.0);
        assert!(forced.scale() < 0.1);
    }

    #[test]
    fn move_overhead_is_kept_back_from_every_budget() {
        let with_overhead = |ms, inc, overhead| {
            let limits = Limits {
                move_overhead: Some(Duration::from_millis(overhead)),
                ..clock(ms, inc, None)
            };
            TimeBudget::from_limits(&limits)
        };
        let soft = |b: TimeBudget| b.soft.expect("soft limit").as_secs_f64();
        // 5 s + 0.05 s: (5 + 19 × 0.05 − 22 × overhead) / 20.
        assert!((soft(with_overhead(5_000, 50, 0)) - 0.2975).abs() < 1e-9);
        assert!((soft(with_overhead(5_000, 50, 100)) - 0.1875).abs() < 1e-9);
        // Unset is the default the time management was measured with.
        assert_eq!(
            TimeBudget::from_limits(&clock(5_000, 50, None)),
            with_overhead(5_000, 50, DEFAULT_MOVE_OVERHEAD.as_millis() as u64)
        );
        // An overhead larger than the clock still leaves a move to play:
        // a quarter of the clock is shared out, within a third of it.
        let tiny = with_overhead(100, 0, 5_000);
        let hard = tiny.hard.expect("hard limit");
        assert!(hard >= Duration::from_millis(1) && hard <= Duration::from_millis(34));
        assert!(tiny.soft.expect("soft limit") > Duration::ZERO);
        // `movetime` loses the overhead too, but never more than a fifth.
        let movetime = |overhead| {
            let limits = Limits {
                movetime: Some(Duration::from_millis(1000)),
                move_overhead: Some(Duration::from_millis(overhead)),
                ..Limits::default()
            };
            TimeBudget::from_limits(&limits).hard
        };
        assert_eq!(movetime(0), Some(Duration::from_millis(1000)));
        assert_eq!(movetime(100), Some(Duration::from_millis(900)));
        assert_eq!(movetime(5_000), Some(Duration::from_millis(800)));
    }

    #[test]
    fn movetime_and_infinite() {
        let limits = Limits {
            movetime: Some(Duration::from_millis(1000)),
            ..Limits::default()
        };
        let b = TimeBudget::from_limits(&limits);
        assert_eq!(b.hard, Some(Duration::from_millis(950)));
        assert_eq!(b.soft, None, "movetime is spent whole");
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

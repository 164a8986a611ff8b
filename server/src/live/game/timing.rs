//! Time in a game: the first-move rule (a side that never makes its first
//! move aborts the game), the grace of an open seek whose creator left, the
//! turn starting its side's clock, and the flag falling.

use std::time::Duration;

use rookery_engine::game::Termination;
use tokio::time::Instant;

use super::{Ending, LiveGame};
use crate::live::clock::Clock;

/// The waits of the first-move rule and of open seeks (issue 22), set by
/// the server's flags.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Timing {
    /// How long a side has for its first move in a game with a clock before
    /// the game is aborted (doubled for clocks of [`SLOW_GAME_INITIAL_MS`]
    /// or more).
    pub first_move: Duration,
    /// How long an open seek stays listed after its creator's last
    /// connection closed (a reload reconnects well within it).
    pub seek_grace: Duration,
}

impl Default for Timing {
    fn default() -> Timing {
        Timing {
            first_move: Duration::from_secs(30),
            seek_grace: Duration::from_secs(10),
        }
    }
}

/// Clocks from this initial time on get twice [`Timing::first_move`].
pub const SLOW_GAME_INITIAL_MS: u64 = 15 * 60 * 1000;

impl LiveGame {
    /// Whether the side to move has yet to make its first move in this game.
    pub(super) fn first_move_pending(&self) -> bool {
        self.plies_in_game() < 2
    }

    /// Sets the waits of the first-move rule and of open seeks.
    pub fn set_timing(&mut self, timing: Timing) {
        self.timing = timing;
    }

    /// How long the side to move has for its first move.
    fn first_move_limit(&self) -> Duration {
        match self.clock_settings {
            Some(clock) if clock.initial_ms >= SLOW_GAME_INITIAL_MS => {
                self.timing.first_move.saturating_mul(2)
            }
            _ => self.timing.first_move,
        }
    }

    /// When the side to move must have made its first move (a person's
    /// seat in a game with a clock), if its wait runs.
    pub(super) fn first_move_deadline(&self) -> Option<Instant> {
        let since = self.first_move_since?;
        if self.seat(self.turn()).ai_level().is_some() {
            return None;
        }
        Some(since + self.first_move_limit())
    }

    /// When an open seek whose creator left is withdrawn.
    fn seek_deadline(&self) -> Option<Instant> {
        let since = self.creator_gone_since?;
        self.is_joinable().then(|| since + self.timing.seek_grace)
    }

    /// When the game must next be looked at by [`Self::check_flag`]: the
    /// running side's flag falls, the side to move's time for its first
    /// move ends, or an abandoned open seek is withdrawn.
    pub fn deadline(&self) -> Option<Instant> {
        if self.is_finished() {
            return None;
        }
        [
            self.clock.as_ref().and_then(Clock::deadline),
            self.first_move_deadline(),
            self.seek_deadline(),
        ]
        .into_iter()
        .flatten()
        .min()
    }

    /// The side to move's turn begins: its clock runs, unless it has yet to
    /// make its first move in this game (then only its first-move wait
    /// runs, and it is charged nothing).
    pub(super) fn start_clock(&mut self, now: Instant) {
        let turn = self.turn();
        let pending = self.first_move_pending();
        if let Some(clock) = &mut self.clock {
            if pending {
                clock.stop(now);
                self.first_move_since = Some(now);
            } else {
                self.first_move_since = None;
                clock.start(turn, now);
            }
        }
    }

    /// Ends the game on time if the running side's flag has fallen. Losing
    /// on time against a side that cannot possibly mate is a draw (FIDE
    /// 6.9).
    ///
    /// Also ends the games nobody started: a side that has not made its
    /// first move in time aborts the game, and so does an open seek whose
    /// creator has been gone for [`Timing::seek_grace`] (both count
    /// nowhere).
    pub fn check_flag(&mut self, now: Instant) -> bool {
        if self.is_finished() {
            return false;
        }
        let lapsed = |deadline: Option<Instant>| deadline.is_some_and(|d| d <= now);
        if lapsed(self.first_move_deadline()) || lapsed(self.seek_deadline()) {
            self.finish(
                Ending {
                    winner: None,
                    termination: Termination::Aborted,
                },
                now,
            );
            return true;
        }
        let Some(flagged) = self.clock.as_ref().and_then(|clock| clock.flagged(now)) else {
            return false;
        };
        let opponent = flagged.other();
        let winner = if self
            .game
            .position()
            .has_insufficient_material(opponent.into())
        {
            None
        } else {
            Some(opponent)
        };
        self.finish(
            Ending {
                winner,
                termination: Termination::Timeout,
            },
            now,
        );
        true
    }

    /// Stops the running clock (the AI v AI pacing pause: the computed move
    /// waits without costing its side time).
    pub fn pause_clock(&mut self, now: Instant) {
        if let Some(clock) = &mut self.clock {
            clock.stop(now);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::testing::{human_game, seated};
    use super::*;
    use crate::live::clock::millis;
    use crate::protocol::{ClockSettings, SeatKind, Side};
    use crate::token::mint;
    use uuid::Uuid;

    #[tokio::test(start_paused = true)]
    async fn flag_fall_loses_unless_the_opponent_cannot_mate() {
        let clock = Some(ClockSettings {
            initial_ms: 1_000,
            increment_ms: 0,
        });
        let mut live = seated(human_game(clock, None));
        // The clocks run once each side has made its first move.
        live.play(Side::White, "e2e4", Instant::now()).unwrap();
        live.play(Side::Black, "e7e5", Instant::now()).unwrap();
        let deadline = live.deadline().unwrap();
        assert!(!live.check_flag(Instant::now()));
        tokio::time::sleep_until(deadline).await;
        assert!(live.check_flag(Instant::now()));
        let state = live.state(Instant::now());
        assert_eq!(state.result.as_deref(), Some("0-1"));
        assert_eq!(state.termination.as_deref(), Some("timeout"));
        assert_eq!(state.clock.unwrap().white_ms, 0);
        assert_eq!(state.clock.unwrap().running, None);

        // White flags, but black has only king and bishop: it cannot mate, a draw.
        let fen = "4k3/8/8/8/8/8/3Q4/4K1b1 w - - 0 1";
        let mut live = seated(human_game(clock, Some(fen)));
        live.play(Side::White, "d2d3", Instant::now()).unwrap();
        live.play(Side::Black, "g1h2", Instant::now()).unwrap();
        tokio::time::advance(Duration::from_millis(1_000)).await;
        assert!(live.check_flag(Instant::now()));
        let state = live.state(Instant::now());
        assert_eq!(state.result.as_deref(), Some("1/2-1/2"));
        assert_eq!(state.termination.as_deref(), Some("timeout"));
    }

    #[tokio::test(start_paused = true)]
    async fn moves_press_the_clock() {
        let clock = Some(ClockSettings {
            initial_ms: 10_000,
            increment_ms: 1_000,
        });
        let mut live = seated(human_game(clock, None));
        // Each side's first move is free: no time charged, no increment.
        tokio::time::advance(Duration::from_millis(2_500)).await;
        let played = live.play(Side::White, "e2e4", Instant::now()).unwrap();
        assert_eq!(played.clock_ms, Some((10_000, 10_000)));
        assert_eq!(live.clock().unwrap().running(), None);
        tokio::time::advance(Duration::from_millis(2_500)).await;
        let played = live.play(Side::Black, "e7e5", Instant::now()).unwrap();
        assert_eq!(played.clock_ms, Some((10_000, 10_000)));
        assert_eq!(live.clock().unwrap().running(), Some(Side::White));
        tokio::time::advance(Duration::from_millis(2_500)).await;
        let played = live.play(Side::White, "g1f3", Instant::now()).unwrap();
        assert_eq!(played.clock_ms, Some((8_500, 10_000)));
        assert_eq!(live.clock().unwrap().running(), Some(Side::Black));
    }

    #[tokio::test(start_paused = true)]
    async fn a_side_that_never_makes_its_first_move_aborts_the_game() {
        let clock = Some(ClockSettings {
            initial_ms: 60_000,
            increment_ms: 0,
        });
        let first = Timing::default().first_move;
        // White never moves: aborted, counting nowhere, clocks untouched.
        let mut live = seated(human_game(clock, None));
        let state = live.state(Instant::now());
        assert_eq!(state.clock.unwrap().running, None);
        assert_eq!(state.first_move_ms, Some(millis(first)));
        tokio::time::advance(first - Duration::from_millis(1)).await;
        assert!(!live.check_flag(Instant::now()));
        tokio::time::advance(Duration::from_millis(1)).await;
        assert!(live.check_flag(Instant::now()));
        let state = live.state(Instant::now());
        assert_eq!(state.termination.as_deref(), Some("aborted"));
        assert_eq!(state.result, None);
        assert_eq!(state.clock.unwrap().white_ms, 60_000);

        // White moves; Black's own wait starts then, and its lapse aborts too.
        let mut live = seated(human_game(clock, None));
        tokio::time::advance(Duration::from_secs(20)).await;
        live.play(Side::White, "e2e4", Instant::now()).unwrap();
        assert_eq!(live.deadline(), Some(Instant::now() + first));
        tokio::time::advance(first).await;
        assert!(live.check_flag(Instant::now()));
        assert_eq!(live.ending().unwrap().termination, Termination::Aborted);

        // Slow games get twice as long.
        let slow = Some(ClockSettings {
            initial_ms: SLOW_GAME_INITIAL_MS,
            increment_ms: 0,
        });
        let live = seated(human_game(slow, None));
        assert_eq!(live.deadline(), Some(Instant::now() + first * 2));

        // The computer's first move has no such wait.
        let mut live = LiveGame::new(
            Uuid::new_v4(),
            0,
            [SeatKind::Ai { level: 1 }, SeatKind::Human],
            clock,
            crate::domain::Variant::Standard,
            None,
        )
        .unwrap();
        live.take_seat(Side::Black, mint().unwrap().hash, None, Instant::now())
            .unwrap();
        assert_eq!(live.deadline(), None);
    }

    #[tokio::test(start_paused = true)]
    async fn an_open_seek_is_withdrawn_when_its_creator_is_gone() {
        let grace = Timing::default().seek_grace;
        let mut live = human_game(None, None);
        live.take_seat(Side::White, mint().unwrap().hash, None, Instant::now())
            .unwrap();
        assert!(live.is_joinable());
        live.connect(Some(Side::White), 1, Instant::now());
        assert_eq!(live.deadline(), None);
        // A reload: the connection closes and a new one opens in time.
        live.connect(Some(Side::White), -1, Instant::now());
        assert_eq!(live.deadline(), Some(Instant::now() + grace));
        tokio::time::advance(grace / 2).await;
        live.connect(Some(Side::White), 1, Instant::now());
        assert_eq!(live.deadline(), None);
        // Gone for good: withdrawn after the grace.
        live.connect(Some(Side::White), -1, Instant::now());
        tokio::time::advance(grace).await;
        assert!(live.check_flag(Instant::now()));
        assert_eq!(live.ending().unwrap().termination, Termination::Aborted);
        assert!(!live.is_joinable());
    }
}

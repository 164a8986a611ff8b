//! How games end when the board does not end them: resignation, abort (by
//! a player before each side has moved, by an operator, or for want of an
//! AI move), the expiry of a game nobody plays, and [`LiveGame::finish`],
//! which every ending goes through.

use crate::domain::Ending;
use rookery_engine::game::Termination;
use tokio::time::Instant;

use super::{GameError, LiveGame};
use crate::protocol::{OfferKind, OfferOutcome, Side, Status};

impl LiveGame {
    /// Ends a game nobody is playing any more (the expiry sweep): a waiting
    /// game is aborted; an untimed active game is adjudicated as a loss on
    /// time for the side to move (the one who stopped answering; a draw if
    /// the opponent cannot mate), or aborted when each side has not moved
    /// yet. A game with a clock is left to its clock: `Ok(false)`.
    pub fn expire(&mut self, now: Instant) -> Result<bool, GameError> {
        match self.status() {
            Status::Finished => Err(GameError::GameOver),
            Status::Waiting => {
                self.finish(
                    Ending {
                        winner: None,
                        termination: Termination::Aborted,
                    },
                    now,
                );
                Ok(true)
            }
            Status::Active if self.clock.is_some() => Ok(false),
            Status::Active => {
                let ending = if self.first_move_pending() {
                    Ending {
                        winner: None,
                        termination: Termination::Aborted,
                    }
                } else {
                    let opponent = self.turn().other();
                    let can_mate = !self
                        .game
                        .position()
                        .has_insufficient_material(opponent.into());
                    Ending {
                        winner: can_mate.then_some(opponent),
                        termination: Termination::Timeout,
                    }
                };
                self.finish(ending, now);
                Ok(true)
            }
        }
    }

    /// Resigns for `side`. Before the game has started there is nothing to
    /// lose: the game is aborted instead (it counts nowhere).
    pub fn resign(&mut self, side: Side, now: Instant) -> Result<(), GameError> {
        if self.is_finished() {
            return Err(GameError::GameOver);
        }
        let ending = if self.status() == Status::Waiting {
            Ending {
                winner: None,
                termination: Termination::Aborted,
            }
        } else {
            Ending {
                winner: Some(side.other()),
                termination: Termination::Resignation,
            }
        };
        self.finish(ending, now);
        Ok(())
    }

    /// Ends the game without a result (`aborted`, it counts nowhere): an
    /// operator stopped it, or its AI could not move.
    pub fn abort(&mut self, now: Instant) -> Result<(), GameError> {
        if self.is_finished() {
            return Err(GameError::GameOver);
        }
        self.finish(
            Ending {
                winner: None,
                termination: Termination::Aborted,
            },
            now,
        );
        Ok(())
    }

    /// A player aborts the game: allowed until each side has made its first
    /// move (no result, it counts nowhere), refused with `abort_too_late`
    /// after that (resign instead).
    pub fn abort_by_player(&mut self, now: Instant) -> Result<(), GameError> {
        if self.is_finished() {
            return Err(GameError::GameOver);
        }
        if self.status() == Status::Active && !self.first_move_pending() {
            return Err(GameError::AbortTooLate);
        }
        self.abort(now)
    }

    pub(super) fn finish(&mut self, ending: Ending, now: Instant) {
        self.ending = Some(ending);
        // Offers standing at the end lapse (an accepted draw is answered by
        // its caller after this).
        if let Some(offerer) = self.draw_offer.take() {
            self.answer_offer(OfferKind::Draw, offerer, OfferOutcome::Expired);
        }
        if let Some(asker) = self.takeback_offer.take() {
            self.answer_offer(OfferKind::Takeback, asker, OfferOutcome::Expired);
        }
        self.first_move_since = None;
        self.creator_gone_since = None;
        if let Some(clock) = &mut self.clock {
            clock.stop(now);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::testing::{human_game, seated};
    use super::*;
    use crate::token::mint;

    #[tokio::test(start_paused = true)]
    async fn resign_before_the_start_aborts() {
        let mut live = human_game(None, None);
        let now = Instant::now();
        live.join(mint().unwrap().hash, None, None, now).unwrap();
        live.resign(Side::White, now).unwrap();
        let state = live.state(now);
        assert_eq!(state.termination.as_deref(), Some("aborted"));
        assert_eq!(state.result, None);
        let mut live = seated(human_game(None, None));
        live.resign(Side::Black, now).unwrap();
        assert_eq!(live.state(now).result.as_deref(), Some("1-0"));
    }

    #[tokio::test(start_paused = true)]
    async fn abort_until_each_side_has_moved() {
        let mut live = seated(human_game(None, None));
        let now = Instant::now();
        live.play(Side::White, "e2e4", now).unwrap();
        let mut early = live.clone();
        early.abort_by_player(now).unwrap();
        assert_eq!(early.state(now).termination.as_deref(), Some("aborted"));
        assert_eq!(early.state(now).result, None);
        live.play(Side::Black, "e7e5", now).unwrap();
        assert!(matches!(
            live.abort_by_player(now),
            Err(GameError::AbortTooLate)
        ));
        assert!(!live.is_finished());
    }
}

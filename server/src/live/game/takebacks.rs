//! Takebacks: asking to take one's last move back, the opponent granting or
//! declining it (the computer grants it at once, and the game turns casual),
//! and undoing the moves.

use rookery_engine::game::Game;
use tokio::time::Instant;

use super::offers::drop_offer;
use super::{Answer, GameError, LiveGame};
use crate::protocol::{OfferKind, OfferOutcome, Side};

impl LiveGame {
    pub fn takeback_offer(&self) -> Option<Side> {
        self.takeback_offer
    }

    pub fn takebacks(&self) -> u32 {
        self.takebacks
    }

    /// Asks to take back one's last move, or accepts the opponent's
    /// request. Against the computer the request is granted at once (and
    /// the game becomes casual: a player who may retract moves against the
    /// engine is not playing the game the scoreboard counts). Asking again
    /// changes nothing (`Ok(false)`).
    pub fn takeback(&mut self, side: Side, now: Instant) -> Result<bool, GameError> {
        self.ensure_playing()?;
        match self.takeback_offer {
            Some(asker) if asker == side.other() => {
                self.take_back(asker, now);
                self.answer_offer(OfferKind::Takeback, asker, OfferOutcome::Accepted);
                return Ok(true);
            }
            Some(_) => return Ok(false),
            None => {}
        }
        if self.plies_to_take_back(side).is_none() {
            return Err(GameError::NothingToTakeBack(
                "you have no move to take back".into(),
            ));
        }
        if self.seat(side.other()).ai_level().is_some() {
            self.take_back(side, now);
            self.rated = false;
            self.answer_offer(OfferKind::Takeback, side, OfferOutcome::Accepted);
        } else {
            self.takeback_offer = Some(side);
        }
        Ok(true)
    }

    /// Declines or withdraws a takeback request (see [`Self::drop_draw_offer`]).
    pub fn drop_takeback_offer(&mut self, side: Side, answer: Answer) -> Result<bool, GameError> {
        self.ensure_playing()?;
        let asker = self.takeback_offer;
        let dropped = drop_offer(&mut self.takeback_offer, side, answer);
        if let (true, Some(asker)) = (dropped, asker) {
            self.answer_offer(OfferKind::Takeback, asker, answer.outcome());
        }
        Ok(dropped)
    }

    /// How many plies a takeback for `side` undoes: its own last move, and
    /// the opponent's reply if there is one. `None` if `side` has not moved
    /// in this game.
    fn plies_to_take_back(&self, side: Side) -> Option<usize> {
        let plies = self.plies_in_game();
        let undo = if self.turn() == side { 2 } else { 1 };
        (plies >= undo).then_some(undo)
    }

    /// Undoes `asker`'s last move (and the reply to it): the position is
    /// rebuilt from the start without them. The clocks keep the times they
    /// show (no time is given back), and the asker's time runs.
    fn take_back(&mut self, asker: Side, now: Instant) {
        let Some(undo) = self.plies_to_take_back(asker) else {
            return;
        };
        let keep = self.game.moves().len() - undo;
        let mut game = Game::new(self.game.initial_position().clone());
        for mv in &self.game.moves()[..keep] {
            // Each of these moves was legal when it was played from the
            // same start: replaying them cannot fail.
            if game.play(*mv).is_err() {
                return;
            }
        }
        self.game = game;
        self.takeback_offer = None;
        self.takebacks = self.takebacks.saturating_add(1);
        self.start_clock(now);
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use uuid::Uuid;

    use super::super::testing::{human_game, seated};
    use super::*;
    use crate::protocol::{ClockSettings, SeatKind};
    use crate::token::mint;

    #[tokio::test(start_paused = true)]
    async fn takebacks_undo_the_askers_move_and_the_reply() {
        let mut live = seated(human_game(None, None));
        let now = Instant::now();
        assert!(matches!(
            live.takeback(Side::White, now),
            Err(GameError::NothingToTakeBack(_))
        ));
        live.play(Side::White, "e2e4", now).unwrap();
        assert!(matches!(
            live.takeback(Side::Black, now),
            Err(GameError::NothingToTakeBack(_))
        ));
        // White asks right after its move: one ply.
        assert!(live.takeback(Side::White, now).unwrap());
        assert!(!live.takeback(Side::White, now).unwrap(), "asking twice");
        assert_eq!(live.takeback_offer(), Some(Side::White));
        assert!(live.takeback(Side::Black, now).unwrap());
        assert_eq!(live.game().moves().len(), 0);
        assert_eq!((live.takebacks(), live.takeback_offer()), (1, None));
        assert!(live.is_rated(), "agreed between people: still rated");
        // After the reply: two plies, back to white's turn.
        live.play(Side::White, "d2d4", now).unwrap();
        live.play(Side::Black, "d7d5", now).unwrap();
        live.takeback(Side::White, now).unwrap();
        // A move answers the request: it is dropped.
        live.play(Side::White, "c2c4", now).unwrap();
        assert_eq!(live.takeback_offer(), None);
        live.takeback(Side::Black, now).unwrap();
        live.takeback(Side::White, now).unwrap();
        assert_eq!(live.state(now).moves, vec!["d2d4"]);
        assert_eq!(live.turn(), Side::Black);
        assert_eq!(live.takebacks(), 2);
    }

    #[tokio::test(start_paused = true)]
    async fn the_computer_grants_takebacks_and_the_game_turns_casual() {
        let mut live = LiveGame::new(
            Uuid::new_v4(),
            0,
            [SeatKind::Human, SeatKind::Ai { level: 1 }],
            Some(ClockSettings {
                initial_ms: 60_000,
                increment_ms: 0,
            }),
            crate::domain::Variant::Standard,
            None,
        )
        .unwrap();
        live.take_seat(Side::White, mint().unwrap().hash, None, Instant::now())
            .unwrap();
        live.play(Side::White, "e2e4", Instant::now()).unwrap();
        live.play_move(
            live.game().position().parse_uci("e7e5").unwrap(),
            Instant::now(),
        )
        .unwrap();
        tokio::time::advance(Duration::from_secs(5)).await;
        assert!(live.takeback(Side::White, Instant::now()).unwrap());
        assert!(live.game().moves().is_empty());
        assert!(!live.is_rated());
        let clock = live.clock().unwrap();
        // Back before White's first move: its clock waits for it again.
        assert_eq!(clock.running(), None);
        assert_eq!(
            clock.remaining(Side::White, Instant::now()),
            Duration::from_secs(55),
            "no time is given back"
        );
    }
}

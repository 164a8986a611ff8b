//! Berserk, an Arena tournament's rule (lichess's): before its first move a
//! player may give up half of its clock and its increment, for one more
//! point if it then wins a game of enough moves (the arena's scoring, in
//! `tournaments/arena/scoring.rs`, reads the flag back from the record).
//!
//! Whether a game allows it at all (an arena game of an arena that allows
//! berserk) is the caller's check: the game only knows its own moves and
//! clock.

use tokio::time::Instant;

use super::{GameError, LiveGame};
use crate::protocol::{Side, Status};

impl LiveGame {
    /// The sides (white, black) that went berserk.
    pub fn berserked(&self) -> [bool; 2] {
        self.berserk
    }

    /// `side` goes berserk: its clock is halved and it loses its increment.
    /// Refused once `side` has moved, in a game that is over or has no
    /// clock, and a second time.
    pub fn berserk(&mut self, side: Side, _now: Instant) -> Result<(), GameError> {
        if self.status() == Status::Finished {
            return Err(GameError::GameOver);
        }
        if self.berserk[side.index()] {
            return Err(GameError::NoBerserk("you already went berserk".into()));
        }
        if self.has_moved(side) {
            return Err(GameError::NoBerserk(
                "berserk is only possible before one's first move".into(),
            ));
        }
        let Some(clock) = &mut self.clock else {
            return Err(GameError::NoBerserk("a game without a clock".into()));
        };
        clock.berserk(side);
        self.berserk[side.index()] = true;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::{ClockSettings, SeatKind};
    use uuid::Uuid;

    fn game() -> LiveGame {
        let clock = ClockSettings {
            initial_ms: 180_000,
            increment_ms: 2_000,
        };
        LiveGame::new(
            Uuid::new_v4(),
            0,
            [SeatKind::Human, SeatKind::Human],
            Some(clock),
            crate::domain::Variant::Standard,
            None,
        )
        .expect("a new game")
    }

    #[tokio::test(start_paused = true)]
    async fn berserk_halves_the_clock_drops_the_increment_and_comes_once() {
        let mut live = game();
        let now = Instant::now();
        live.berserk(Side::Black, now)
            .expect("berserk before moving");
        assert_eq!(live.berserked(), [false, true]);
        let view = live.clock().expect("a clock").view(now);
        assert_eq!((view.white_ms, view.black_ms), (180_000, 90_000));
        assert!(matches!(
            live.berserk(Side::Black, now),
            Err(GameError::NoBerserk(_))
        ));
        let mut clock = live.clock().expect("a clock").clone();
        clock.press(Side::Black, now);
        assert_eq!(clock.remaining(Side::Black, now).as_millis(), 90_000);
        clock.press(Side::White, now);
        assert_eq!(clock.remaining(Side::White, now).as_millis(), 182_000);
    }
}

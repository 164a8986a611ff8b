//! A live game as the wire shows it: [`LiveGame::snapshot`] (what
//! `protocol::view` builds the [`GameState`] from) and [`LiveGame::state`].

use tokio::time::Instant;

use super::LiveGame;
use serde_json::Value;

use crate::domain::{Side, Status};
use crate::live::clock::millis;
use crate::protocol::lichess;
use crate::protocol::view::{view, GameSnapshot, LiveOnly};
use crate::protocol::GameState;

impl LiveGame {
    /// The game at `now`, for [`view`].
    pub fn snapshot(&self, now: Instant) -> GameSnapshot<'_> {
        let position = self.game.position();
        GameSnapshot {
            id: self.id.to_string(),
            status: self.status(),
            seats: [self.seat(Side::White), self.seat(Side::Black)],
            initial_fen: self.game.initial_position().to_fen(),
            position,
            fen: position.to_fen(),
            moves: self.game.uci_moves(),
            san: self.game.san_moves().to_vec(),
            ending: self.ending,
            clock: self.clock.as_ref().map(|clock| {
                let mut view = clock.view(now);
                view.initial_ms = self.clock_settings.map_or(0, |c| c.initial_ms);
                view
            }),
            draw_offer: self.draw_offer,
            takeback_offer: self.takeback_offer,
            takebacks: self.takebacks,
            rematch: self.rematch.as_ref(),
            created_at: self.created_at,
            rated: self.rated,
            visibility: self.visibility,
            variant: self.variant(),
            berserk: self.berserked(),
            live: LiveOnly {
                spectators: self.spectators,
                first_move_ms: self
                    .first_move_deadline()
                    .map(|deadline| millis(deadline.saturating_duration_since(now))),
                offer_answer: self.offer_answer,
            },
        }
    }

    /// The wire state of the game at `now`.
    pub fn state(&self, now: Instant) -> GameState {
        view(self.snapshot(now))
    }

    /// lichess's game object of this game for each registered player's
    /// side, with the player's id: the `gameStart` and `gameFinish` events
    /// (`source`: lichess's `friend`, `ai`, `lobby`; see
    /// [`LiveGame::event_source`] for a finished game).
    pub fn event_games(&self, source: &str) -> Vec<(String, Value)> {
        let now = Instant::now();
        let unplayed_seek =
            self.game.moves().is_empty() && !self.is_ai_vs_ai() && self.status() == Status::Waiting;
        let status = lichess::status(self.ending, unplayed_seek);
        Side::BOTH
            .into_iter()
            .filter_map(|side| {
                let player = self.seat(side).player()?;
                let game = lichess::EventGame {
                    id: self.id.to_string(),
                    side,
                    fen: self.game.position().to_fen(),
                    has_moved: self.has_moved(side),
                    my_turn: self.ending.is_none() && self.turn() == side,
                    last_move: self.game.uci_moves().pop().unwrap_or_default(),
                    opponent: self.seat(side.other()),
                    clock: self.clock_settings,
                    seconds_left: self
                        .clock
                        .as_ref()
                        .map(|clock| clock.remaining(side, now).as_secs()),
                    rated: self.rated,
                    variant: self.variant(),
                    status,
                    ending: self.ending,
                    source,
                };
                Some((player.id.clone(), lichess::event_game(&game)))
            })
            .collect()
    }

    /// The `source` lichess's events give a finished game: `ai` when a
    /// computer played in it, else `friend`.
    pub fn event_source(&self) -> &'static str {
        if self.is_ai_vs_ai()
            || Side::BOTH
                .iter()
                .any(|s| self.seat(*s).ai_level().is_some())
        {
            "ai"
        } else {
            "friend"
        }
    }
}

//! The game as the wire shows it: [`GameState`], built from a live game.

use tokio::time::Instant;

use super::{LiveGame, LiveSeat};
use crate::live::clock::millis;
use crate::protocol::{GameState, SeatView, Side};

impl LiveSeat {
    fn view(&self) -> SeatView {
        match self {
            LiveSeat::Human {
                token,
                player,
                connections,
            } => SeatView::Human {
                name: player.as_ref().map(|p| p.name.clone()),
                connected: *connections > 0,
                taken: token.is_some(),
                rating: player.as_ref().map(|p| p.rating),
            },
            LiveSeat::Ai { level } => SeatView::Ai { level: *level },
        }
    }
}

impl LiveGame {
    pub fn state(&self, now: Instant) -> GameState {
        let position = self.game.position();
        let finished = self.is_finished();
        GameState {
            id: self.id.to_string(),
            status: self.status(),
            white: self.seat(Side::White).view(),
            black: self.seat(Side::Black).view(),
            initial_fen: self.game.initial_position().to_fen(),
            fen: position.to_fen(),
            turn: self.turn(),
            moves: self.game.moves().iter().map(|mv| mv.to_uci()).collect(),
            san: self.game.san_moves().to_vec(),
            legal_moves: if finished {
                Vec::new()
            } else {
                position
                    .legal_moves()
                    .iter()
                    .map(|mv| mv.to_uci())
                    .collect()
            },
            check: position.is_check(),
            result: self.ending.and_then(|e| e.result()).map(str::to_string),
            termination: self.ending.map(|e| e.termination.as_str().to_string()),
            clock: self.clock.as_ref().map(|clock| clock.view(now)),
            draw_offer: self.draw_offer,
            takeback_offer: self.takeback_offer,
            takebacks: self.takebacks,
            rematch_offer: self
                .rematch
                .as_ref()
                .filter(|r| !r.agreed)
                .map(|r| r.offered_by),
            rematch: self
                .rematch
                .as_ref()
                .filter(|r| r.agreed)
                .map(|r| r.game.to_string()),
            spectators: self.spectators,
            created_at: self.created_at,
            rated: self.rated,
            visibility: self.visibility,
            joinable: self.is_joinable(),
            first_move_ms: self
                .first_move_deadline()
                .map(|deadline| millis(deadline.saturating_duration_since(now))),
            offer_answer: self.offer_answer,
        }
    }
}

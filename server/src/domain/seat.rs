//! Players and seats as data: [`PlayerRef`] (an account as a seat shows
//! it) and [`GameSeat`] (what sits in a seat). Taking a seat is a rule of
//! the live game (`live/game/seats.rs`).

use super::{SeatKind, SeatRating};
use crate::token::TokenHash;

/// Whether `name` is a valid account name: 1–20 characters of
/// `A-Z a-z 0-9 _ -`. Names are shown to other people, so they are data
/// that can never carry markup or look like someone else's name through
/// look-alike characters.
pub fn valid_name(name: &str) -> bool {
    let valid_char = |c: char| c.is_ascii_alphanumeric() || c == '_' || c == '-';
    (1..=20).contains(&name.len()) && name.chars().all(valid_char)
}

/// A registered player holding a seat.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct PlayerRef {
    pub id: String,
    pub name: String,
    /// The rating the seat shows (see [`SeatRating`]).
    pub rating: SeatRating,
}

/// What sits in one seat of a game: a person (their seat token's hash,
/// their account if any, their open connections) or the computer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum GameSeat {
    Human {
        /// `None` while the seat is free.
        token: Option<TokenHash>,
        player: Option<PlayerRef>,
        /// Open WebSocket connections authenticated for this seat.
        connections: u32,
    },
    Ai {
        level: u8,
    },
}

impl GameSeat {
    pub fn new(kind: SeatKind) -> GameSeat {
        match kind {
            SeatKind::Human => GameSeat::Human {
                token: None,
                player: None,
                connections: 0,
            },
            SeatKind::Ai { level } => GameSeat::Ai { level },
        }
    }

    pub fn is_free(&self) -> bool {
        matches!(self, GameSeat::Human { token: None, .. })
    }

    pub fn ai_level(&self) -> Option<u8> {
        match self {
            GameSeat::Ai { level } => Some(*level),
            GameSeat::Human { .. } => None,
        }
    }

    pub fn player(&self) -> Option<&PlayerRef> {
        match self {
            GameSeat::Human { player, .. } => player.as_ref(),
            GameSeat::Ai { .. } => None,
        }
    }

    pub fn token(&self) -> Option<&TokenHash> {
        match self {
            GameSeat::Human { token, .. } => token.as_ref(),
            GameSeat::Ai { .. } => None,
        }
    }
}

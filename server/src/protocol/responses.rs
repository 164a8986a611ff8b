//! The HTTP answers that hand out a secret: a new or joined game with its
//! seat token (and invite), an agreed rematch's seat, a new player's token.

use serde::{Deserialize, Serialize};

use super::state::GameState;
use super::Side;

/// The secret that lets its holder move for a colour.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Seat {
    pub color: Side,
    pub token: String,
}

/// `POST /api/games` and `POST /api/games/{id}/join`.
#[derive(Debug, Clone, Serialize)]
pub struct GameWithSeat {
    pub game: GameState,
    pub seat: Option<Seat>,
    /// Added: a new private game's invite secret (shown once, stored hashed);
    /// absent otherwise.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub invite: Option<String>,
    /// Added: a pass-and-play game's two seats, white then black (`seat`
    /// is the white one); absent otherwise.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub seats: Option<[Seat; 2]>,
}

/// `POST /api/games/{id}/rematch`: the game, and once the rematch is
/// agreed, the caller's seat in the new game.
#[derive(Debug, Clone, Serialize)]
pub struct RematchAnswer {
    pub game: GameState,
    pub rematch: Option<RematchSeat>,
}

#[derive(Debug, Clone, Serialize)]
pub struct RematchSeat {
    /// The new game's id.
    pub id: String,
    pub seat: Seat,
}

/// `POST /api/players`.
#[derive(Debug, Serialize)]
pub struct PlayerCreated {
    pub id: String,
    pub name: String,
    pub token: String,
}

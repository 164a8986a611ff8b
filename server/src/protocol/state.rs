//! The whole public state of a game as the wire shows it ([`GameState`]),
//! and its parts: seats, ratings shown on seats, the clock, offer answers.

use serde::{Deserialize, Serialize};

use super::{SeatRating, Side, Status, Variant, Visibility};

/// The whole public state of a game.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GameState {
    pub id: String,
    pub status: Status,
    pub white: SeatView,
    pub black: SeatView,
    pub initial_fen: String,
    pub fen: String,
    pub turn: Side,
    pub moves: Vec<String>,
    pub san: Vec<String>,
    pub legal_moves: Vec<String>,
    pub check: bool,
    pub result: Option<String>,
    pub termination: Option<String>,
    pub clock: Option<ClockView>,
    pub draw_offer: Option<Side>,
    /// Added (offers): the side asking to take back its last move.
    pub takeback_offer: Option<Side>,
    /// Added: takebacks granted in this game.
    pub takebacks: u32,
    /// Added: the side offering a rematch of this finished game.
    pub rematch_offer: Option<Side>,
    /// Added: the id of the agreed rematch game.
    pub rematch: Option<String>,
    /// Added to the contract: read-only WebSocket connections watching now.
    pub spectators: u32,
    /// Added to the contract: creation time, milliseconds since the Unix epoch.
    pub created_at: i64,
    /// Added: whether the result counts on the main scoreboard.
    pub rated: bool,
    /// Added: who may take the free seat.
    pub visibility: Visibility,
    /// Added: waiting for an opponent and open to anyone (an open seek).
    pub joinable: bool,
    /// Added (issue 22): while a side has not yet made its first move of a
    /// game with a clock (its clock does not run), the milliseconds it has
    /// left to make it before the game is aborted.
    #[serde(default)]
    pub first_move_ms: Option<u64>,
    /// Added (issue 22): on the one state made by the change that ended an
    /// offer, what became of it (so its maker is told); `null` otherwise.
    #[serde(default)]
    pub offer_answer: Option<OfferAnswer>,
    /// Added (issue 40): the rules, `standard` or `chess960`. In a Chess960
    /// game `moves` and `legal_moves` spell castling king takes rook.
    #[serde(default)]
    pub variant: Variant,
    /// Added (issue 38): the sides that went berserk in an arena game
    /// (their clock halved, no increment); left out when none did.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub berserk: Vec<Side>,
}

/// What became of an offer (draw, takeback or rematch).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct OfferAnswer {
    pub offer: OfferKind,
    /// The side that made the offer.
    pub by: Side,
    pub answer: OfferOutcome,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum OfferKind {
    Draw,
    Takeback,
    Rematch,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum OfferOutcome {
    /// The opponent accepted it.
    Accepted,
    /// The opponent declined it (a draw offer is also declined by moving).
    Declined,
    /// Its maker took it back.
    Withdrawn,
    /// It lapsed: a move was made (a takeback request) or the game ended.
    Expired,
}

impl GameState {
    pub fn is_finished(&self) -> bool {
        self.status == Status::Finished
    }
}

/// A seat as shown in a GameState.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "lowercase")]
pub enum SeatView {
    Human {
        name: Option<String>,
        connected: bool,
        /// Added to the contract: whether someone holds this seat.
        taken: bool,
        /// Added (issue 11): a registered player's rating, as `rating` and
        /// `provisional` fields of the seat; absent for anonymous seats.
        #[serde(flatten, default, skip_serializing_if = "Option::is_none")]
        rating: Option<SeatRating>,
    },
    Ai {
        level: u8,
    },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct ClockView {
    pub white_ms: u64,
    pub black_ms: u64,
    pub increment_ms: u64,
    /// Added (issue 36): each side's time at the start, so lists show the
    /// time control ("5+3") of a game under way.
    #[serde(default)]
    pub initial_ms: u64,
    pub running: Option<Side>,
}

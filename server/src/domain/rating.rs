//! Ratings as values: a player's Glicko-2 rating as a seat shows it. The
//! arithmetic of rating a game is the store's (`store/ratings.rs`), because
//! it runs in the transaction that records the result.

use serde::{Deserialize, Serialize};

/// A registered player's Glicko-2 rating as a seat shows it: before the game
/// for a game that has been rated, else the player's rating when the seat
/// was taken or the game read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct SeatRating {
    /// Rounded to a whole number.
    pub rating: i64,
    /// The rating deviation is still above [`PROVISIONAL_DEVIATION`].
    pub provisional: bool,
}

/// Above this rating deviation a rating is shown as provisional (lichess's
/// threshold: about ten rated games from the start).
pub const PROVISIONAL_DEVIATION: f64 = 110.0;

impl SeatRating {
    pub fn of(rating: f64, deviation: f64) -> SeatRating {
        SeatRating {
            rating: rating.round() as i64,
            provisional: deviation > PROVISIONAL_DEVIATION,
        }
    }
}

//! **The domain floor**: what a game *is*, as data, below everything that
//! stores it, runs it or sends it. No I/O and no calls upward: `store/`
//! writes and reads these values, `live/` produces them from its running
//! games, `protocol/` spells them on the wire.
//!
//! - [`game`]: colours ([`Side`]), a game's [`Status`], what a new seat is
//!   ([`SeatKind`]), [`ClockSettings`], [`Visibility`].
//! - [`variant`]: the rules a game is played by ([`Variant`]: standard or
//!   Chess960), with how its castling is spelled and its fair starts.
//! - [`seat`]: an account in a seat ([`PlayerRef`]) and what sits in a seat
//!   ([`GameSeat`]).
//! - [`rating`]: a rating as a seat shows it ([`SeatRating`]).
//! - [`record`]: a game as written ([`GameRecord`], [`PlayedMove`]) and as
//!   read back ([`SavedGame`]), its [`Ending`], a [`Rematch`].
//! - [`challenge`]: a challenge by name ([`Challenge`]).

pub mod challenge;
pub mod game;
pub mod rating;
pub mod record;
pub mod seat;
pub mod variant;

pub use challenge::Challenge;
pub use game::{ClockSettings, SeatKind, Side, Status, Visibility};
pub use rating::{SeatRating, PROVISIONAL_DEVIATION};
pub use record::{ClockRecord, Ending, GameRecord, PlayedMove, Rematch, SavedClock, SavedGame};
pub use seat::{valid_name, GameSeat, PlayerRef};
pub use variant::{random_chess960_start, Variant, CHESS960_STARTS};

//! The JSON shapes of the public contract (`docs/API.md`): what clients send
//! and what the server answers, over HTTP, NDJSON and WebSocket alike.
//!
//! One file per concern; every shape is re-exported here, so callers name
//! `crate::protocol::X` whatever file it lives in:
//!
//! - [`requests`]: HTTP request bodies and query strings (`CreateGame`,
//!   `MoveRequest`, `ListQuery`, ...) and `Visibility`.
//! - [`validate`]: [`CreateGame::validate`] into a [`NewGame`], the one place
//!   here that names the HTTP error (a bad value is a `bad_request` with a
//!   message that says what was wrong).
//! - [`state`]: [`GameState`] and its parts (seats, ratings, clock, offers).
//! - [`responses`]: answers that hand out secrets (seat tokens, invites).
//! - [`lists`]: game lists, levels, the scoreboard, player profiles.
//! - [`ws`]: WebSocket messages both ways and the shared broadcasts.

pub mod lists;
pub mod requests;
pub mod responses;
pub mod state;
pub mod validate;
pub mod ws;

// The domain types the wire speaks as they are (see `live::domain`).
pub use crate::live::domain::{ClockSettings, SeatKind, Side, Status};

pub use lists::{
    AiScore, ColorScore, GameList, LevelView, PlayerProfile, PlayerScore, RatingPoint, RecordView,
    Scoreboard, HISTORY_POINTS,
};
pub use requests::{
    ClockRequest, CreateGame, CreatePlayer, JoinRequest, ListQuery, MoveRequest, PlayerGamesQuery,
    SeatChoice, SeatRequest, Visibility,
};
pub use responses::{GameWithSeat, PlayerCreated, RematchAnswer, RematchSeat, Seat};
pub use state::{
    ClockView, GameState, OfferAnswer, OfferKind, OfferOutcome, SeatRating, SeatView,
    PROVISIONAL_DEVIATION,
};
pub use validate::{NewGame, MAX_HISTORY_PLIES};
pub use ws::{
    server_text, Broadcast, ClientMessage, Presence, ServerMessage, SharedState, WsQuery,
};

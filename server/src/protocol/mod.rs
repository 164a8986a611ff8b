//! The JSON shapes of the public contract (`docs/API.md`): what clients send
//! and what the server answers, over HTTP, NDJSON and WebSocket alike, in
//! Rookery's own dialect and lichess's (`docs/lichess-compat.md`).
//!
//! One file per concern; every shape is re-exported here, so callers name
//! `crate::protocol::X` whatever file it lives in:
//!
//! - [`pgn`]: PGN export and import of games.
//! - [`requests`]: HTTP request bodies and query strings (`CreateGame`,
//!   `MoveRequest`, `ListQuery`, ...).
//! - [`validate`]: [`CreateGame::validate`] into a [`NewGame`], the one place
//!   here that names the HTTP error (a bad value is a `bad_request` with a
//!   message that says what was wrong).
//! - [`state`]: [`GameState`] and its parts (seats, ratings, clock, offers).
//! - [`responses`]: answers that hand out secrets (seat tokens, invites).
//! - [`lichess`]: lichess's shapes (events, challenges, statuses, speeds,
//!   users) for the lichess-compatible API and the event streams.
//! - [`lists`]: game lists, levels, the scoreboard, player profiles.
//! - [`view`]: [`view::view`], the one builder of a [`GameState`], from a
//!   live or a stored game's snapshot.
//! - [`ws`]: WebSocket messages both ways and the shared broadcasts.

pub mod lichess;
pub mod lists;
pub mod pgn;
pub mod requests;
pub mod responses;
pub mod state;
pub mod validate;
pub mod view;
pub mod ws;

// The domain types the wire speaks as they are (see `domain`).
pub use crate::domain::{
    ClockSettings, SeatKind, SeatRating, Side, Status, Variant, Visibility, PROVISIONAL_DEVIATION,
};

pub use lists::{
    AiScore, ColorScore, GameList, LevelView, PlayerProfile, PlayerScore, RatingPoint, RecordView,
    Scoreboard, HISTORY_POINTS,
};
pub use requests::{
    ClockRequest, CreateGame, CreatePlayer, JoinRequest, ListQuery, MoveRequest, PlayerGamesQuery,
    SeatChoice, SeatRequest,
};
pub use responses::{GameWithSeat, PlayerCreated, RematchAnswer, RematchSeat, Seat};
pub use state::{ClockView, GameState, OfferAnswer, OfferKind, OfferOutcome, SeatView};
pub use validate::{NewGame, MAX_HISTORY_PLIES};
pub use ws::{
    server_text, Broadcast, ChatEntry, ClientMessage, Presence, ServerMessage, SharedState, WsQuery,
};

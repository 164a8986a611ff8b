//! What clients send over HTTP: the bodies and query strings of the
//! requests (`POST /api/games`, moves, joins, players, list queries).
//!
//! These parse straight into domain types where that is cheap (colours, seat
//! kinds); the checks that need more than serde (level range, clock range,
//! FEN, PGN, `as`) live in [`super::validate`].

use serde::Deserialize;

use crate::domain::Visibility;

/// `{"kind": "human"}` or `{"kind": "ai", "level": 1..8}`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(tag = "kind", rename_all = "lowercase")]
pub enum SeatRequest {
    Human,
    Ai { level: i64 },
}

/// The optional clock of a new game, in seconds.
#[derive(Debug, Clone, Copy, Deserialize)]
pub struct ClockRequest {
    pub initial: f64,
    #[serde(default)]
    pub increment: f64,
}

/// `POST /api/games`.
#[derive(Debug, Clone, Deserialize)]
pub struct CreateGame {
    pub white: SeatRequest,
    pub black: SeatRequest,
    #[serde(rename = "as", default)]
    pub as_side: Option<SeatChoice>,
    #[serde(default)]
    pub clock: Option<ClockRequest>,
    #[serde(default)]
    pub fen: Option<String>,
    /// Added: who may take the free seat (default `open`, the original
    /// contract's join by id).
    #[serde(default)]
    pub visibility: Option<Visibility>,
    /// Added (issue 11): continue a game from a PGN: the new game starts
    /// from the PGN's last position (not with both `fen` and `pgn`).
    #[serde(default)]
    pub pgn: Option<String>,
    /// Added (issue 25): which game of a `pgn` of several to continue (from
    /// 0, as `POST /api/pgn` lists them; default the first).
    #[serde(default)]
    pub pgn_index: Option<usize>,
    /// Added (issue 22): moves already played from `fen` (or the standard
    /// start), in UCI: the new game starts with them in its move list.
    #[serde(default)]
    pub moves: Option<Vec<String>>,
    /// Added (issue 40): `standard` (the default) or `chess960`.
    #[serde(default)]
    pub variant: Option<String>,
    /// Added (issue 36): `false` makes the game casual (no rating moves);
    /// `true` asks for a rated game and is refused (400) when the game
    /// cannot be one. Absent: rated when the rated rule allows.
    #[serde(default)]
    pub rated: Option<bool>,
    /// Added (issue 40), with `chess960`: the start position's number,
    /// 0 to 959 (without it and without `fen`, one drawn at random).
    #[serde(default)]
    pub chess960_start: Option<i64>,
}

/// The `as` of a new game: one seat, or (added) `both` for pass and play,
/// one device holding both human seats.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum SeatChoice {
    White,
    Black,
    Both,
}

/// `POST /api/players`.
#[derive(Debug, Deserialize)]
pub struct CreatePlayer {
    pub name: String,
}

/// `POST /api/games/{id}/move`.
#[derive(Debug, Deserialize)]
pub struct MoveRequest {
    pub uci: String,
}

/// `POST /api/games/{id}/join`: an optional body.
#[derive(Debug, Default, Deserialize)]
pub struct JoinRequest {
    /// The invite secret of a private game.
    #[serde(default)]
    pub invite: Option<String>,
}

/// `GET /api/games?status=&limit=&joinable=`.
#[derive(Debug, Deserialize)]
pub struct ListQuery {
    #[serde(default)]
    pub status: Option<String>,
    #[serde(default)]
    pub limit: Option<String>,
    /// Added: `true` lists only open seeks (waiting games anyone may join).
    #[serde(default)]
    pub joinable: Option<String>,
    /// Added (issue 11): only this registered player's games.
    #[serde(default)]
    pub player: Option<String>,
    /// Added (issue 11), with `player`: the cursor of the next page.
    #[serde(default)]
    pub before: Option<String>,
}

/// `GET /api/players/{name}/games?before=&limit=`.
#[derive(Debug, Deserialize)]
pub struct PlayerGamesQuery {
    #[serde(default)]
    pub before: Option<String>,
    #[serde(default)]
    pub limit: Option<String>,
}

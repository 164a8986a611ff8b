//! The read-only listings: game lists, the AI levels, the scoreboard and
//! its records, and a player's profile with its rating history.

use serde::Serialize;

use super::state::GameState;

#[derive(Debug, Serialize)]
pub struct GameList {
    pub games: Vec<GameState>,
    /// Added (issue 11), lists of one player's games only: the `before`
    /// cursor of the next page, `null` on the last page.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub next: Option<Option<String>>,
}

#[derive(Debug, Serialize)]
pub struct LevelView {
    pub level: u8,
    pub name: &'static str,
    pub elo: Option<u32>,
    /// Added: the deepest search in plies, `null` for no limit.
    pub max_depth: Option<u32>,
    /// Added: the longest think per move, in milliseconds.
    pub max_think_ms: u64,
    /// Added: the most nodes searched per move, `null` for no limit.
    pub max_nodes: Option<u64>,
    /// Added: randomness of the move choice in centipawns (0: always best).
    pub temperature_cp: u32,
}

#[derive(Debug, Clone, Default, Serialize)]
pub struct Scoreboard {
    pub colors: ColorScore,
    pub players: Vec<PlayerScore>,
    pub ai: Vec<AiScore>,
    /// Added: finished casual games (custom start or a clock under the
    /// minimum) by winning color; they count nowhere else.
    pub casual: ColorScore,
    /// Added (issue 11): the records, in a fixed order (see docs/API.md).
    pub records: Vec<RecordView>,
}

#[derive(Debug, Clone, Default, Serialize)]
pub struct ColorScore {
    pub white: i64,
    pub black: i64,
    pub draws: i64,
}

#[derive(Debug, Clone, Serialize)]
pub struct PlayerScore {
    pub name: String,
    pub games: i64,
    pub wins: i64,
    pub losses: i64,
    pub draws: i64,
    /// Added (issue 11): Glicko-2 rating and deviation, rounded.
    pub rating: i64,
    pub rating_deviation: i64,
    /// Added: the deviation is above [`PROVISIONAL_DEVIATION`](super::PROVISIONAL_DEVIATION).
    pub provisional: bool,
}

/// One record of the scoreboard.
#[derive(Debug, Clone, Serialize)]
pub struct RecordView {
    /// `fastest_checkmate`, `fastest_checkmate_vs_ai`, `longest_game`,
    /// `biggest_upset` or `longest_win_streak`.
    pub record: &'static str,
    /// The AI level of a per-level record, else absent.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub level: Option<u8>,
    /// Moves, rating points or wins, by record.
    pub value: i64,
    /// The holder's name.
    pub player: String,
    /// Who they played in the game that set it: a player's name,
    /// `anonymous` or `level N`; absent for a win streak.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub opponent: Option<String>,
    /// The game that set it.
    pub game: String,
    /// When it was set, ms since the Unix epoch.
    pub at: i64,
}

/// `GET /api/players/{name}`.
#[derive(Debug, Clone, Serialize)]
pub struct PlayerProfile {
    pub name: String,
    /// When the player registered, ms since the Unix epoch.
    pub created_at: i64,
    pub rating: i64,
    pub rating_deviation: i64,
    pub provisional: bool,
    /// Finished games that count on the scoreboard (against anyone).
    pub games: i64,
    pub wins: i64,
    pub losses: i64,
    pub draws: i64,
    pub win_streak: i64,
    pub best_win_streak: i64,
    /// The rating after each of the last [`HISTORY_POINTS`] rated games,
    /// oldest first.
    pub history: Vec<RatingPoint>,
}

/// The most rating history points a profile carries.
pub const HISTORY_POINTS: u32 = 500;

/// One rated game in a player's history.
#[derive(Debug, Clone, Serialize)]
pub struct RatingPoint {
    pub game: String,
    /// When the result was stored, ms since the Unix epoch.
    pub at: i64,
    pub opponent: String,
    /// `win`, `loss` or `draw`.
    pub result: &'static str,
    pub before: i64,
    pub after: i64,
    pub deviation: i64,
}

#[derive(Debug, Clone, Serialize)]
pub struct AiScore {
    pub level: u8,
    pub games: i64,
    pub wins: i64,
    pub losses: i64,
    pub draws: i64,
}

//! A challenge by name (issue 21) as data: who challenges whom, on what
//! terms, and what became of it.

use super::Variant;

/// A challenge by name, with both players' names and ratings. The store
/// reads it as one row (hence `FromRow`: the column names are these).
#[derive(Debug, Clone, sqlx::FromRow)]
pub struct Challenge {
    pub id: String,
    pub challenger_id: String,
    pub challenger_name: String,
    pub challenger_rating: f64,
    pub challenger_deviation: f64,
    /// Whether the challenger is a bot account (migration 0011).
    pub challenger_bot: bool,
    pub dest_id: String,
    pub dest_name: String,
    pub dest_rating: f64,
    pub dest_deviation: f64,
    pub dest_bot: bool,
    pub color: String,
    pub final_color: String,
    pub clock_initial_ms: Option<i64>,
    pub clock_increment_ms: Option<i64>,
    pub rated: bool,
    pub status: String,
    pub decline_reason: Option<String>,
    pub game_id: Option<String>,
    pub created_at: i64,
    pub expires_at: i64,
    /// The rules' key, `standard` or `chess960` (migration 0013).
    pub variant: String,
    /// A Chess960 challenge's start, drawn or given when it was made;
    /// `None`: the standard position.
    pub initial_fen: Option<String>,
}

impl Challenge {
    /// The rules; an unknown stored key reads as standard (the column's
    /// check allows only the two).
    pub fn variant(&self) -> Variant {
        Variant::parse(&self.variant).unwrap_or_default()
    }

    /// Its status now: an open challenge past its time has expired.
    pub fn status_at(&self, now_ms: i64) -> &str {
        if self.status == "created" && self.expires_at <= now_ms {
            "expired"
        } else {
            &self.status
        }
    }
}

//! What the lichess-compatible API (issue 24) keeps (migrations/0011):
//! bot accounts and game chat.

use uuid::Uuid;

use super::backend::{on_conn, on_pool, Conn};
use super::error::StoreError;
use super::writer::Write;
use super::{now_ms, Store};
use crate::domain::PlayerRef;
use crate::protocol::SeatRating;

/// The most chat lines a game keeps per room (older ones are not read).
pub const CHAT_LINES: i64 = 200;

#[derive(Debug, Clone)]
pub enum LichessWrite {
    /// The account becomes a bot, if it still has no games.
    UpgradeToBot { player_id: String },
    Chat {
        game_id: String,
        room: &'static str,
        username: String,
        text: String,
    },
}

impl LichessWrite {
    pub async fn apply(&self, conn: Conn<'_>) -> Result<(), sqlx::Error> {
        match self {
            LichessWrite::UpgradeToBot { player_id } => {
                let updated = on_conn!(conn, c => sqlx::query(
                    "UPDATE players SET bot = TRUE WHERE id = $1 AND NOT EXISTS (
                         SELECT 1 FROM games WHERE white_player_id = $1 OR black_player_id = $1)",
                )
                .bind(player_id)
                .execute(c)
                .await?
                .rows_affected());
                if updated == 0 {
                    return Err(sqlx::Error::RowNotFound);
                }
                Ok(())
            }
            LichessWrite::Chat {
                game_id,
                room,
                username,
                text,
            } => on_conn!(conn, c => sqlx::query(
                "INSERT INTO chat_lines (id, game_id, room, username, text, created_at)
                 VALUES ($1, $2, $3, $4, $5, $6)",
            )
            .bind(Uuid::new_v4().to_string())
            .bind(game_id)
            .bind(room)
            .bind(username)
            .bind(text)
            .bind(now_ms())
            .execute(c)
            .await
            .map(|_| ())),
        }
    }
}

impl Store {
    /// Makes the account a bot; `Ok(false)` if it has games already.
    pub async fn upgrade_to_bot(&self, player_id: &str) -> Result<bool, StoreError> {
        match self
            .write(Write::Lichess(LichessWrite::UpgradeToBot {
                player_id: player_id.to_string(),
            }))
            .await
        {
            Ok(()) => Ok(true),
            Err(super::writer::WriteError::Rejected(_)) => Ok(false),
            Err(err) => Err(err.into()),
        }
    }

    pub async fn is_bot(&self, player_id: &str) -> Result<bool, StoreError> {
        let bot: Option<bool> = on_pool!(&self.inner.read, pool => sqlx::query_scalar(
            "SELECT bot FROM players WHERE id = $1",
        )
        .bind(player_id)
        .fetch_optional(pool)
        .await)?;
        Ok(bot.unwrap_or(false))
    }

    /// Every bot account (the online ones are picked by the caller).
    pub async fn bots(&self) -> Result<Vec<PlayerRef>, StoreError> {
        let rows: Vec<(String, String, f64, f64)> = on_pool!(&self.inner.read, pool => sqlx::query_as(
            "SELECT id, name, rating, rating_deviation FROM players WHERE bot = TRUE
             ORDER BY name_key LIMIT 1000",
        )
        .fetch_all(pool)
        .await)?;
        Ok(rows
            .into_iter()
            .map(|(id, name, rating, deviation)| PlayerRef {
                id,
                name,
                rating: SeatRating::of(rating, deviation),
            })
            .collect())
    }

    pub async fn add_chat(
        &self,
        game_id: &str,
        room: &'static str,
        username: &str,
        text: &str,
    ) -> Result<(), StoreError> {
        Ok(self
            .write(Write::Lichess(LichessWrite::Chat {
                game_id: game_id.to_string(),
                room,
                username: username.to_string(),
                text: text.to_string(),
            }))
            .await?)
    }

    /// A game's chat in `room`, oldest first: (username, text).
    pub async fn chat(
        &self,
        game_id: &str,
        room: &str,
    ) -> Result<Vec<(String, String)>, StoreError> {
        let mut lines: Vec<(String, String)> = on_pool!(&self.inner.read, pool => sqlx::query_as(
            "SELECT username, text FROM chat_lines WHERE game_id = $1 AND room = $2
             ORDER BY created_at DESC, id DESC LIMIT $3",
        )
        .bind(game_id)
        .bind(room)
        .bind(CHAT_LINES)
        .fetch_all(pool)
        .await)?;
        lines.reverse();
        Ok(lines)
    }
}

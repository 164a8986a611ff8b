//! Challenges by name (migrations/0010). Accepting one stores its game in
//! the same transaction, and only if the challenge was still open: two
//! accepts (two devices, a retry) make one game.

use super::backend::{on_conn, on_pool, Conn};
use super::error::StoreError;
use super::rows::StoredGame;
use super::writer::{Write, WriteError};
use super::{now_ms, Store};

pub use crate::domain::Challenge;

const SELECT: &str = "SELECT c.id, c.challenger_id, cp.name AS challenger_name,
        cp.rating AS challenger_rating, cp.rating_deviation AS challenger_deviation,
        cp.bot AS challenger_bot,
        c.dest_id, dp.name AS dest_name, dp.rating AS dest_rating,
        dp.rating_deviation AS dest_deviation, dp.bot AS dest_bot,
        c.color, c.final_color, c.clock_initial_ms, c.clock_increment_ms, c.rated, c.status,
        c.decline_reason, c.game_id, c.created_at, c.expires_at, c.variant, c.initial_fen
    FROM challenges c
    JOIN players cp ON cp.id = c.challenger_id
    JOIN players dp ON dp.id = c.dest_id";

/// A new challenge's columns.
#[derive(Debug, Clone)]
pub struct NewChallenge {
    pub id: String,
    pub challenger_id: String,
    pub dest_id: String,
    pub color: &'static str,
    pub final_color: &'static str,
    pub clock_initial_ms: Option<i64>,
    pub clock_increment_ms: Option<i64>,
    pub rated: bool,
    pub created_at: i64,
    pub expires_at: i64,
    pub variant: &'static str,
    pub initial_fen: Option<String>,
}

/// A write of the challenges table.
#[derive(Debug, Clone)]
pub enum ChallengeWrite {
    Create(NewChallenge),
    /// An open challenge ends (`declined` with a reason, `canceled`,
    /// `expired`); refused when it is no longer open.
    Close {
        id: String,
        status: &'static str,
        reason: Option<String>,
    },
    /// An open challenge is accepted and its game stored, together;
    /// refused when it is no longer open.
    Accept {
        id: String,
        game: Box<StoredGame>,
    },
}

impl ChallengeWrite {
    pub async fn apply(&self, mut conn: Conn<'_>) -> Result<(), sqlx::Error> {
        match self {
            ChallengeWrite::Create(new) => on_conn!(conn, c => sqlx::query(
                "INSERT INTO challenges (id, challenger_id, dest_id, color, final_color,
                     clock_initial_ms, clock_increment_ms, rated, status, created_at, expires_at,
                     variant, initial_fen)
                 VALUES ($1, $2, $3, $4, $5, $6, $7, $8, 'created', $9, $10, $11, $12)",
            )
            .bind(&new.id)
            .bind(&new.challenger_id)
            .bind(&new.dest_id)
            .bind(new.color)
            .bind(new.final_color)
            .bind(new.clock_initial_ms)
            .bind(new.clock_increment_ms)
            .bind(new.rated)
            .bind(new.created_at)
            .bind(new.expires_at)
            .bind(new.variant)
            .bind(&new.initial_fen)
            .execute(c)
            .await
            .map(|_| ())),
            ChallengeWrite::Close { id, status, reason } => {
                let updated = on_conn!(conn, c => sqlx::query(
                    "UPDATE challenges SET status = $1, decline_reason = $2
                     WHERE id = $3 AND status = 'created'",
                )
                .bind(status)
                .bind(reason)
                .bind(id)
                .execute(c)
                .await?
                .rows_affected());
                if updated == 0 {
                    return Err(sqlx::Error::RowNotFound);
                }
                Ok(())
            }
            ChallengeWrite::Accept { id, game } => {
                let updated = on_conn!(conn.reborrow(), c => sqlx::query(
                    "UPDATE challenges SET status = 'accepted', game_id = $1
                     WHERE id = $2 AND status = 'created' AND expires_at > $3",
                )
                .bind(&game.id)
                .bind(id)
                .bind(now_ms())
                .execute(c)
                .await?
                .rows_affected());
                if updated == 0 {
                    return Err(sqlx::Error::RowNotFound);
                }
                game.insert(conn).await
            }
        }
    }
}

impl Store {
    /// Writes a challenge change. `Ok(false)`: the challenge was no longer
    /// open (answered, cancelled or expired meanwhile); nothing changed.
    pub async fn write_challenge(&self, write: ChallengeWrite) -> Result<bool, StoreError> {
        match self.write(Write::Challenge(write)).await {
            Ok(()) => Ok(true),
            Err(WriteError::Rejected(_)) => Ok(false),
            Err(err) => Err(err.into()),
        }
    }

    pub async fn challenge(&self, id: &str) -> Result<Option<Challenge>, StoreError> {
        let sql = format!("{SELECT} WHERE c.id = $1");
        Ok(on_pool!(&self.inner.read, pool => sqlx::query_as(&sql)
            .bind(id)
            .fetch_optional(pool)
            .await)?)
    }

    /// The open challenges to and from the player, newest first.
    pub async fn open_challenges(&self, player_id: &str) -> Result<Vec<Challenge>, StoreError> {
        let sql = format!(
            "{SELECT} WHERE (c.dest_id = $1 OR c.challenger_id = $1)
               AND c.status = 'created' AND c.expires_at > $2
             ORDER BY c.created_at DESC LIMIT 100"
        );
        Ok(on_pool!(&self.inner.read, pool => sqlx::query_as(&sql)
            .bind(player_id)
            .bind(now_ms())
            .fetch_all(pool)
            .await)?)
    }
}

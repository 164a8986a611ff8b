//! Bounded storage (issue 23, migrations/0012): which finished games the
//! retention sweep deletes, and their deletion with every row that belongs
//! to them.
//!
//! Two kinds of games may go, each after its own time since it ended:
//! - aborted games in which at most one move was played (after
//!   `--aborted-game-retention-secs`): they count nowhere and show nothing
//!   worth keeping; an aborted game with more moves (an AI that failed, an
//!   operator's stop) is a real game and stays;
//! - when the operator sets `--anonymous-game-retention-secs`, finished
//!   games with no registered player (anonymous people and the computer),
//!   which no account can ever list again.
//!
//! A finished game never changes again in the columns these rules read,
//! so a candidate stays one until it is deleted.

use uuid::Uuid;

use super::backend::{on_conn, on_pool, Conn};
use super::error::StoreError;
use super::writer::Write;
use super::{parse_ids, Store};

/// The rows that name a game, children first; `games` itself last.
const OWNED_ROWS: [&str; 5] = [
    "DELETE FROM analysis_positions WHERE game_id = $1",
    "DELETE FROM analyses WHERE game_id = $1",
    "DELETE FROM chat_lines WHERE game_id = $1",
    "DELETE FROM moves WHERE game_id = $1",
    "DELETE FROM game_leases WHERE game_id = $1",
];

/// How old (by `finished_at`, ms since the Unix epoch) a finished game must
/// be for each rule to delete it; `None`: the rule keeps everything.
#[derive(Debug, Clone, Copy, Default)]
pub struct RetentionCutoffs {
    pub aborted_before: Option<i64>,
    pub anonymous_before: Option<i64>,
}

impl Store {
    /// Up to `limit` games the retention rules delete now, oldest first.
    pub async fn expired_games(
        &self,
        cutoffs: RetentionCutoffs,
        limit: u32,
    ) -> Result<Vec<Uuid>, StoreError> {
        let mut ids: Vec<String> = Vec::new();
        if let Some(before) = cutoffs.aborted_before {
            // The WHERE repeats the partial index's condition, so the index
            // is used; the move count reads the moves' primary key.
            ids = on_pool!(&self.inner.read, pool => sqlx::query_scalar(
                "SELECT id FROM games g
                 WHERE termination = 'aborted' AND finished_at < $1
                   AND (SELECT COUNT(*) FROM moves m WHERE m.game_id = g.id) < g.start_ply + 2
                 ORDER BY finished_at
                 LIMIT $2",
            )
            .bind(before)
            .bind(i64::from(limit))
            .fetch_all(pool)
            .await)?;
        }
        let left = i64::from(limit) - ids.len() as i64;
        if let (Some(before), true) = (cutoffs.anonymous_before, left > 0) {
            let anonymous: Vec<String> = on_pool!(&self.inner.read, pool => sqlx::query_scalar(
                "SELECT id FROM games
                 WHERE status = 'finished' AND white_player_id IS NULL
                   AND black_player_id IS NULL AND finished_at < $1
                 ORDER BY finished_at
                 LIMIT $2",
            )
            .bind(before)
            .bind(left)
            .fetch_all(pool)
            .await)?;
            for id in anonymous {
                if !ids.contains(&id) {
                    ids.push(id);
                }
            }
        }
        Ok(parse_ids(&ids))
    }

    /// Deletes finished game `id` and every row that belongs to it, in one
    /// transaction. A game that is not finished, or has rows the deletion does
    /// not know (a rating, a record), is left alone (`Ok(false)`).
    pub async fn delete_finished_game(&self, id: Uuid) -> Result<bool, StoreError> {
        let write = Write::DeleteGame { id: id.to_string() };
        match self.write(write).await {
            Ok(()) => {
                // Anonymous games counted on the scoreboard.
                self.result_recorded();
                Ok(true)
            }
            // Not finished, or a row of it the deletion does not know
            // (a rating, a record): the game stays, whole.
            Err(super::writer::WriteError::Rejected(_)) => Ok(false),
            Err(err) => Err(err.into()),
        }
    }
}

/// [`Write::DeleteGame`]: the owned rows, then the game row, only if the
/// game is finished (else `RowNotFound`, which rolls this write back).
pub(super) async fn delete_game(mut conn: Conn<'_>, id: &str) -> Result<(), sqlx::Error> {
    let finished: Option<String> = on_conn!(conn.reborrow(), c => sqlx::query_scalar(
        "SELECT id FROM games WHERE id = $1 AND status = 'finished'",
    )
    .bind(id)
    .fetch_optional(c)
    .await)?;
    if finished.is_none() {
        return Err(sqlx::Error::RowNotFound);
    }
    for statement in OWNED_ROWS {
        on_conn!(conn.reborrow(), c => sqlx::query(statement)
            .bind(id)
            .execute(c)
            .await
            .map(|_| ()))?;
    }
    on_conn!(conn, c => sqlx::query("DELETE FROM games WHERE id = $1")
        .bind(id)
        .execute(c)
        .await
        .map(|_| ()))
}

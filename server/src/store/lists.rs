//! Stored games read as wire states without a replay: one game by id,
//! the public lists, the open seeks; [`Store::states_of`] turns list rows
//! into states for these and for a player's pages.

use uuid::Uuid;

use super::backend::{on_pool, Dialect};
use super::error::StoreError;
use super::rows::ListRow;
use super::{now_ms, Store};
use crate::protocol::{GameState, Status};

impl Store {
    /// The state of stored game `id`, built from its row (no replay for
    /// games written since migration 0002). Presence is not stored: nobody
    /// is counted as connected.
    pub async fn game_state(&self, id: Uuid) -> Result<Option<GameState>, StoreError> {
        let sql = ListRow::select(self.dialect(), "WHERE g.id = $1", "");
        let row: Option<ListRow> = on_pool!(&self.inner.read, pool => sqlx::query_as(&sql)
            .bind(id.to_string())
            .fetch_optional(pool)
            .await)?;
        let Some(row) = row else {
            return Ok(None);
        };
        let mut states = self.states_of(vec![row]).await?;
        Ok(states.pop())
    }

    /// Games (as states), newest first, with one of `statuses`: one query,
    /// through an index, without a sort of the table.
    pub async fn list_games(
        &self,
        statuses: &[Status],
        limit: u32,
    ) -> Result<Vec<GameState>, StoreError> {
        let sql = list_sql(self.dialect(), statuses)?;
        let rows: Vec<ListRow> = on_pool!(&self.inner.read, pool => sqlx::query_as(&sql)
            .bind(i64::from(limit))
            .fetch_all(pool)
            .await)?;
        self.states_of(rows).await
    }

    /// Waiting open games (open seeks), as states, newest first: one query
    /// through migration 0003's partial index.
    pub async fn list_open_seeks(&self, limit: u32) -> Result<Vec<GameState>, StoreError> {
        let sql = open_seeks_sql(self.dialect());
        let rows: Vec<ListRow> = on_pool!(&self.inner.read, pool => sqlx::query_as(&sql)
            .bind(i64::from(limit))
            .fetch_all(pool)
            .await)?;
        self.states_of(rows).await
    }

    pub(super) async fn states_of(&self, rows: Vec<ListRow>) -> Result<Vec<GameState>, StoreError> {
        let store = self.clone();
        // Legal moves of each position (and the replay of a game stored
        // before 0002) are CPU work: off the async workers.
        tokio::task::spawn_blocking(move || {
            let now = now_ms();
            rows.into_iter().map(|row| row.state(&store, now)).collect()
        })
        .await
        .map_err(StoreError::internal)?
    }
}

/// The query of the public list of games with one of `statuses`, newest
/// first. Each filter reads an index of migrations/0002 backwards
/// (`created_at DESC, rowid DESC` with no sort): `status != 'finished'`
/// selects the partial index of unfinished games. Private games (friend
/// games, private rematches) are not listed (issue 21); they stay readable
/// by their id.
pub(super) fn list_sql(dialect: Dialect, statuses: &[Status]) -> Result<String, StoreError> {
    let has = |status| statuses.contains(&status);
    let filter = match (
        has(Status::Waiting),
        has(Status::Active),
        has(Status::Finished),
    ) {
        (true, true, true) => "WHERE g.visibility = 'open'",
        (true, true, false) => "WHERE g.status != 'finished' AND g.visibility = 'open'",
        (true, false, false) => "WHERE g.status = 'waiting' AND g.visibility = 'open'",
        (false, true, false) => "WHERE g.status = 'active' AND g.visibility = 'open'",
        (false, false, true) => "WHERE g.status = 'finished' AND g.visibility = 'open'",
        _ => {
            return Err(StoreError::internal(format!(
                "list of {statuses:?} not supported"
            )))
        }
    };
    Ok(ListRow::select(
        dialect,
        filter,
        "ORDER BY g.created_at DESC, g.rowid DESC LIMIT $1",
    ))
}

/// The query of the open seeks (waiting open games), newest first.
pub(super) fn open_seeks_sql(dialect: Dialect) -> String {
    ListRow::select(
        dialect,
        "WHERE g.status = 'waiting' AND g.visibility = 'open'",
        "ORDER BY g.created_at DESC LIMIT $1",
    )
}

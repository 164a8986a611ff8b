//! A game's own rows: stored when created, each change recorded through
//! the group commit (with its move, a takeback, a rematch, a fence), loaded
//! back as stored; and which games a starting server resumes
//! or the sweeper closes.

use tokio::time::Instant;
use uuid::Uuid;

use super::backend::on_pool;
use super::error::StoreError;
use super::leases::Fence;
use super::rows::{self, GameRow, StoredGame};
use super::writer::Write;
use super::{now_ms, parse_ids, Store};
use crate::domain::{GameRecord, PlayedMove, SavedGame};

/// One stored move and its clocks (see [`Store::move_clocks`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MoveClocks {
    pub uci: String,
    /// White's and Black's remaining milliseconds after the move,
    /// increment included.
    pub clock_ms: Option<(i64, i64)>,
}

impl Store {
    /// Stores a new game with its `history` (the moves it was created
    /// with, an imported game's).
    pub async fn insert_game(
        &self,
        game: &GameRecord,
        history: &[PlayedMove],
    ) -> Result<(), StoreError> {
        let now = now_ms();
        let stored = StoredGame::of(game, Instant::now(), now);
        let history = history
            .iter()
            .map(|mv| rows::StoredMove::of(game.id, mv, now))
            .collect();
        Ok(self
            .write(Write::InsertGame {
                game: stored,
                history,
            })
            .await?)
    }

    /// Writes the changed game (and the move that changed it, if any) in one
    /// transaction, with other games' writes. Returns once that transaction
    /// is committed: durable.
    pub async fn record(
        &self,
        game: &GameRecord,
        mv: Option<&PlayedMove>,
    ) -> Result<(), StoreError> {
        self.record_change(game, mv, None, None, None).await
    }

    /// [`Store::record`], and in the same transaction: the plies from
    /// `taken_back_from` on deleted (a takeback), a rematch game inserted.
    /// With a `fence` (a cluster node's lease), the write is stored only if
    /// the lease is still the fence's; otherwise it fails with
    /// [`StoreError::Fenced`] and nothing of it is stored.
    pub async fn record_change(
        &self,
        game: &GameRecord,
        mv: Option<&PlayedMove>,
        taken_back_from: Option<usize>,
        rematch: Option<&GameRecord>,
        fence: Option<&Fence>,
    ) -> Result<(), StoreError> {
        let now = now_ms();
        let instant = Instant::now();
        let stored = StoredGame::of(game, instant, now);
        let mv = mv.map(|mv| rows::StoredMove::of(game.id, mv, now));
        let write = Write::UpdateGame {
            game: stored,
            mv,
            taken_back_from: taken_back_from.map(|ply| ply as i64),
            rematch: rematch.map(|new| Box::new(StoredGame::of(new, instant, now))),
            fence: fence.cloned(),
        };
        self.write(write).await?;
        if game.is_finished() {
            // A new result: the next scoreboard read counts it.
            self.result_recorded();
        }
        Ok(())
    }

    /// Whether game `id` is stored (a page for it answers 200, else 404).
    pub async fn game_exists(&self, id: Uuid) -> Result<bool, StoreError> {
        let row: Option<(String,)> = on_pool!(&self.inner.read, pool =>
            sqlx::query_as("SELECT id FROM games WHERE id = $1")
                .bind(id.to_string())
                .fetch_optional(pool)
                .await)?;
        Ok(row.is_some())
    }

    /// A stored game as it was written, with its moves (for a live game to
    /// be restored from: `live::load_game`). `None` if there is no such
    /// game.
    pub async fn saved_game(&self, id: Uuid) -> Result<Option<SavedGame>, StoreError> {
        let row: Option<GameRow> = on_pool!(&self.inner.read, pool =>
            sqlx::query_as(&GameRow::select("WHERE g.id = $1"))
                .bind(id.to_string())
                .fetch_optional(pool)
                .await)?;
        let Some(row) = row else {
            return Ok(None);
        };
        let moves: Vec<String> = on_pool!(&self.inner.read, pool =>
            sqlx::query_scalar("SELECT uci FROM moves WHERE game_id = $1 ORDER BY ply")
                .bind(id.to_string())
                .fetch_all(pool)
                .await)?;
        row.saved(moves, self, now_ms()).map(Some)
    }

    /// Each stored move's UCI and both clocks after it (`None` for a move
    /// made without a clock, or an imported one), in ply order: the PGN
    /// export's `[%clk]` comments.
    pub async fn move_clocks(&self, id: Uuid) -> Result<Vec<MoveClocks>, StoreError> {
        let rows: Vec<(String, Option<i64>, Option<i64>)> = on_pool!(&self.inner.read, pool =>
            sqlx::query_as("SELECT uci, white_ms, black_ms FROM moves WHERE game_id = $1 ORDER BY ply")
                .bind(id.to_string())
                .fetch_all(pool)
                .await)?;
        Ok(rows
            .into_iter()
            .map(|(uci, white, black)| MoveClocks {
                uci,
                clock_ms: white.zip(black),
            })
            .collect())
    }

    /// Unfinished games whose clock runs or whose side to move may be a
    /// computer: their actors must run again soon after a start.
    pub async fn games_to_resume(&self) -> Result<Vec<Uuid>, StoreError> {
        let ids: Vec<String> = on_pool!(&self.inner.read, pool => sqlx::query_scalar(
            "SELECT id FROM games
             WHERE status != 'finished' AND status = 'active'
               AND (clock_initial_ms IS NOT NULL OR white_kind = 'ai' OR black_kind = 'ai')
             ORDER BY created_at DESC",
        )
        .fetch_all(pool)
        .await)?;
        Ok(parse_ids(&ids))
    }

    /// Unfinished games with an AI in both seats: they count towards
    /// `--max-ai-games` again after a restart.
    pub async fn unfinished_ai_v_ai_games(&self) -> Result<Vec<Uuid>, StoreError> {
        let ids: Vec<String> = on_pool!(&self.inner.read, pool => sqlx::query_scalar(
            "SELECT id FROM games
             WHERE status != 'finished' AND white_kind = 'ai' AND black_kind = 'ai'",
        )
        .fetch_all(pool)
        .await)?;
        Ok(parse_ids(&ids))
    }

    /// Games nobody has touched for a while: waiting games last changed
    /// before `waiting_before`, untimed active games before `idle_before`
    /// (ms since the epoch). At most `limit`.
    pub async fn stale_games(
        &self,
        waiting_before: i64,
        idle_before: i64,
        limit: u32,
    ) -> Result<Vec<Uuid>, StoreError> {
        let ids: Vec<String> = on_pool!(&self.inner.read, pool => sqlx::query_scalar(
            "SELECT id FROM games
             WHERE status != 'finished' AND status = 'waiting' AND updated_at < $1
             UNION ALL
             SELECT id FROM games
             WHERE status != 'finished' AND status = 'active' AND updated_at < $2
               AND clock_initial_ms IS NULL
             LIMIT $3",
        )
        .bind(waiting_before)
        .bind(idle_before)
        .bind(i64::from(limit))
        .fetch_all(pool)
        .await)?;
        Ok(parse_ids(&ids))
    }
}

//! Post-game analysis rows (migrations/0004): the job of a game and the
//! evaluation of each of its positions. Writes go through the one writer
//! like every other write; reads use the read pool.

use uuid::Uuid;

use super::backend::{on_conn, on_pool, Conn};
use super::error::StoreError;
use super::writer::Write;
use super::{now_ms, Store};

/// A write of the analysis tables.
#[derive(Debug, Clone)]
pub enum AnalysisWrite {
    /// A new job, or a failed one asked for again (its rows are kept: the
    /// positions already evaluated need no second search).
    Request {
        game_id: String,
        nodes_per_ply: i64,
        positions: i64,
        requested_at: i64,
    },
    /// The job's status changed.
    Status {
        game_id: String,
        status: &'static str,
        error: Option<String>,
        finished_at: Option<i64>,
        acpl: [Option<i64>; 2],
    },
    /// One position evaluated, and the judgement of the move that led to
    /// it (stored on the previous position's row), in one transaction.
    Position {
        row: PositionRow,
        previous_move: Option<MoveJudgement>,
    },
}

/// The judgement of the move played from position `ply`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MoveJudgement {
    pub ply: i64,
    pub loss: i64,
    pub judgement: Option<&'static str>,
}

/// One evaluated position.
#[derive(Debug, Clone, PartialEq, Eq, sqlx::FromRow)]
pub struct PositionRow {
    pub game_id: String,
    pub ply: i64,
    pub cp: Option<i64>,
    pub mate: Option<i64>,
    pub best_uci: Option<String>,
    pub best_san: Option<String>,
    pub loss: Option<i64>,
    pub judgement: Option<String>,
}

/// A job's row.
#[derive(Debug, Clone, sqlx::FromRow)]
pub struct AnalysisRow {
    pub status: String,
    pub nodes_per_ply: i64,
    pub positions: i64,
    pub acpl_white: Option<i64>,
    pub acpl_black: Option<i64>,
}

impl AnalysisWrite {
    pub(super) async fn apply(&self, mut conn: Conn<'_>) -> Result<(), sqlx::Error> {
        match self {
            AnalysisWrite::Request {
                game_id,
                nodes_per_ply,
                positions,
                requested_at,
            } => {
                on_conn!(conn.reborrow(), c => sqlx::query(
                    "INSERT INTO analyses (game_id, status, nodes_per_ply, positions, requested_at)
                     VALUES ($1, 'queued', $2, $3, $4)
                     ON CONFLICT (game_id) DO UPDATE SET status = 'queued', error = NULL,
                         finished_at = NULL
                     WHERE analyses.status = 'failed'",
                )
                .bind(game_id)
                .bind(nodes_per_ply)
                .bind(positions)
                .bind(requested_at)
                .execute(c)
                .await.map(|_| ()))?;
            }
            AnalysisWrite::Status {
                game_id,
                status,
                error,
                finished_at,
                acpl,
            } => {
                on_conn!(conn.reborrow(), c => sqlx::query(
                    "UPDATE analyses SET status = $2, error = $3, finished_at = $4,
                         acpl_white = $5, acpl_black = $6
                     WHERE game_id = $1",
                )
                .bind(game_id)
                .bind(status)
                .bind(error)
                .bind(finished_at)
                .bind(acpl[0])
                .bind(acpl[1])
                .execute(c)
                .await.map(|_| ()))?;
            }
            AnalysisWrite::Position { row, previous_move } => {
                on_conn!(conn.reborrow(), c => sqlx::query(
                    "INSERT INTO analysis_positions
                         (game_id, ply, cp, mate, best_uci, best_san, loss, judgement)
                     VALUES ($1, $2, $3, $4, $5, $6, NULL, NULL)
                     ON CONFLICT (game_id, ply) DO UPDATE SET cp = excluded.cp,
                         mate = excluded.mate, best_uci = excluded.best_uci,
                         best_san = excluded.best_san, loss = NULL, judgement = NULL",
                )
                .bind(&row.game_id)
                .bind(row.ply)
                .bind(row.cp)
                .bind(row.mate)
                .bind(&row.best_uci)
                .bind(&row.best_san)
                .execute(c)
                .await.map(|_| ()))?;
                if let Some(judged) = previous_move {
                    on_conn!(conn.reborrow(), c => sqlx::query(
                        "UPDATE analysis_positions SET loss = $3, judgement = $4
                         WHERE game_id = $1 AND ply = $2",
                    )
                    .bind(&row.game_id)
                    .bind(judged.ply)
                    .bind(judged.loss)
                    .bind(judged.judgement)
                    .execute(c)
                    .await.map(|_| ()))?;
                }
            }
        }
        Ok(())
    }
}

impl Store {
    pub async fn write_analysis(&self, write: AnalysisWrite) -> Result<(), StoreError> {
        Ok(self.write(Write::Analysis(write)).await?)
    }

    /// Records a request for game `id`'s analysis (a failed one is queued
    /// again; a queued, running or done one is left as it is).
    pub async fn request_analysis(
        &self,
        id: Uuid,
        nodes_per_ply: u64,
        positions: usize,
    ) -> Result<(), StoreError> {
        self.write_analysis(AnalysisWrite::Request {
            game_id: id.to_string(),
            nodes_per_ply: i64::try_from(nodes_per_ply).unwrap_or(i64::MAX),
            positions: i64::try_from(positions).unwrap_or(i64::MAX),
            requested_at: now_ms(),
        })
        .await
    }

    /// Game `id`'s analysis job and its evaluated positions, by ply.
    pub async fn analysis(
        &self,
        id: Uuid,
    ) -> Result<Option<(AnalysisRow, Vec<PositionRow>)>, StoreError> {
        let Some(job) = on_pool!(&self.inner.read, pool => sqlx::query_as::<_, AnalysisRow>(
            "SELECT status, nodes_per_ply, positions, acpl_white, acpl_black
             FROM analyses WHERE game_id = $1",
        )
        .bind(id.to_string())
        .fetch_optional(pool)
        .await)?
        else {
            return Ok(None);
        };
        let positions = on_pool!(&self.inner.read, pool => sqlx::query_as::<_, PositionRow>(
            "SELECT game_id, ply, cp, mate, best_uci, best_san, loss, judgement
             FROM analysis_positions WHERE game_id = $1 ORDER BY ply",
        )
        .bind(id.to_string())
        .fetch_all(pool)
        .await)?;
        Ok(Some((job, positions)))
    }

    /// Jobs queued or running when the server stopped, oldest first.
    pub async fn unfinished_analyses(&self) -> Result<Vec<Uuid>, StoreError> {
        let ids: Vec<String> = on_pool!(&self.inner.read, pool => sqlx::query_scalar(
            "SELECT game_id FROM analyses WHERE status IN ('queued', 'running')
             ORDER BY requested_at",
        )
        .fetch_all(pool)
        .await)?;
        Ok(ids
            .iter()
            .filter_map(|id| Uuid::parse_str(id).ok())
            .collect())
    }
}

//! The scoreboard (`GET /api/scoreboard`): results by colour, the players
//! and the computer's levels ranked, and the records, read from the stored
//! results and cached for [`SCOREBOARD_TTL`]. The records themselves are
//! set by [`super::ratings`] when a result is stored.

use std::sync::PoisonError;
use std::time::Duration;

use tokio::time::Instant;

use super::backend::on_pool;
use super::error::StoreError;
use super::rows;
use super::Store;
use crate::protocol::{
    AiScore, ColorScore, PlayerScore, RecordView, Scoreboard, PROVISIONAL_DEVIATION,
};

/// How long a scoreboard answer is reused: it is a scan of every finished
/// game. A game that finishes drops it at once, so the cache only spares
/// the repeated reads between results (a page refreshed, many viewers).
const SCOREBOARD_TTL: Duration = Duration::from_secs(2);

/// The records, in the order the scoreboard lists them.
const RECORDS: [&str; 5] = [
    "fastest_checkmate",
    "fastest_checkmate_vs_ai",
    "longest_game",
    "biggest_upset",
    "longest_win_streak",
];

/// The last scoreboard read and when; `generation` counts the finished
/// games recorded, so a read that raced with one is not kept.
#[derive(Default)]
pub(super) struct ScoreboardCache {
    generation: u64,
    board: Option<(Instant, Scoreboard)>,
}

#[derive(Debug, sqlx::FromRow)]
struct RecordRow {
    record: String,
    level: i64,
    value: f64,
    player_id: String,
    player: String,
    game_id: String,
    set_at: i64,
    white_kind: String,
    white_level: Option<i64>,
    white_player_id: Option<String>,
    white_name: Option<String>,
    black_kind: String,
    black_level: Option<i64>,
    black_name: Option<String>,
}

impl Store {
    /// The scoreboard from the recorded results, cached for
    /// [`SCOREBOARD_TTL`]. Aborted games (no result) count nowhere; casual
    /// games (`rated = 0`: a custom start or a clock under the minimum)
    /// count only in the separate `casual` tally, so a custom-FEN mate in
    /// one or a sub-second flag farms nothing.
    pub async fn scoreboard(&self) -> Result<Scoreboard, StoreError> {
        let generation = {
            let cache = self.scoreboard_cache();
            if let Some((at, board)) = &cache.board {
                if at.elapsed() < SCOREBOARD_TTL {
                    return Ok(board.clone());
                }
            }
            cache.generation
        };
        let board = self.scoreboard_uncached().await?;
        let mut cache = self.scoreboard_cache();
        // A game finished while this was read: do not keep the older board.
        if cache.generation == generation {
            cache.board = Some((Instant::now(), board.clone()));
        }
        Ok(board)
    }

    /// Drops the cached board and counts a new result, so the next read
    /// counts it and a read that raced with it is not kept.
    pub(super) fn result_recorded(&self) {
        let mut cache = self.scoreboard_cache();
        cache.generation += 1;
        cache.board = None;
    }

    fn scoreboard_cache(&self) -> std::sync::MutexGuard<'_, ScoreboardCache> {
        // Every update of the cache is a single assignment: a poisoned lock
        // still holds a valid cache.
        self.inner
            .scoreboard
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }

    async fn scoreboard_uncached(&self) -> Result<Scoreboard, StoreError> {
        // Which finished games count: one place, so a rule (e.g. casual
        // games) is added once.
        const FINISHED: &str = "status = 'finished' AND result IS NOT NULL";
        const COUNTED: &str = "status = 'finished' AND result IS NOT NULL AND rated";
        // `rated` is a boolean in PostgreSQL and 0/1 in SQLite: used only
        // as a condition, it reads the same in both.
        let colors_sql = format!(
            "SELECT
                 COUNT(*) FILTER (WHERE rated AND result = '1-0') AS white,
                 COUNT(*) FILTER (WHERE rated AND result = '0-1') AS black,
                 COUNT(*) FILTER (WHERE rated AND result = '1/2-1/2') AS draws,
                 COUNT(*) FILTER (WHERE NOT rated AND result = '1-0') AS casual_white,
                 COUNT(*) FILTER (WHERE NOT rated AND result = '0-1') AS casual_black,
                 COUNT(*) FILTER (WHERE NOT rated AND result = '1/2-1/2') AS casual_draws
             FROM games WHERE {FINISHED}"
        );
        let colors: rows::ColorRow = on_pool!(&self.inner.read, pool =>
            sqlx::query_as(&colors_sql).fetch_one(pool).await)?;
        // One row per seat of each counted game, scored from that seat's
        // point of view.
        let seats = format!(
            "WITH seats AS (
                SELECT white_kind AS kind, white_level AS level, white_player_id AS player,
                       CASE result WHEN '1-0' THEN 1 WHEN '0-1' THEN -1 ELSE 0 END AS score
                FROM games WHERE {COUNTED}
                UNION ALL
                SELECT black_kind, black_level, black_player_id,
                       CASE result WHEN '0-1' THEN 1 WHEN '1-0' THEN -1 ELSE 0 END
                FROM games WHERE {COUNTED}
            )"
        );
        const TALLY: &str = "COUNT(*) AS games,
            COUNT(*) FILTER (WHERE score = 1) AS wins,
            COUNT(*) FILTER (WHERE score = -1) AS losses,
            COUNT(*) FILTER (WHERE score = 0) AS draws";
        let players_sql = format!(
            "{seats}
             SELECT p.name AS name, {TALLY},
                    p.rating AS rating, p.rating_deviation AS rating_deviation
             FROM seats JOIN players p ON p.id = seats.player
             GROUP BY p.id
             ORDER BY (COUNT(*) FILTER (WHERE score = 1) * 2
                       + COUNT(*) FILTER (WHERE score = 0)) DESC,
                      COUNT(*) DESC, p.name_key
             LIMIT 100"
        );
        let players: Vec<rows::PlayerScoreRow> = on_pool!(&self.inner.read, pool =>
            sqlx::query_as(&players_sql).fetch_all(pool).await)?;
        let ai_sql = format!(
            "{seats}
             SELECT level, {TALLY}
             FROM seats WHERE kind = 'ai'
             GROUP BY level ORDER BY level"
        );
        let ai: Vec<rows::AiScoreRow> = on_pool!(&self.inner.read, pool =>
            sqlx::query_as(&ai_sql).fetch_all(pool).await)?;
        let records = self.records().await?;
        Ok(Scoreboard {
            colors: ColorScore {
                white: colors.white,
                black: colors.black,
                draws: colors.draws,
            },
            casual: ColorScore {
                white: colors.casual_white,
                black: colors.casual_black,
                draws: colors.casual_draws,
            },
            players: players
                .into_iter()
                .map(|row| PlayerScore {
                    name: row.name,
                    games: row.games,
                    wins: row.wins,
                    losses: row.losses,
                    draws: row.draws,
                    rating: row.rating.round() as i64,
                    rating_deviation: row.rating_deviation.round() as i64,
                    provisional: row.rating_deviation > PROVISIONAL_DEVIATION,
                })
                .collect(),
            ai: ai
                .into_iter()
                .map(|row| AiScore {
                    level: u8::try_from(row.level).unwrap_or(0),
                    games: row.games,
                    wins: row.wins,
                    losses: row.losses,
                    draws: row.draws,
                })
                .collect(),
            records,
        })
    }

    /// The records, in [`RECORDS`] order (per-level records by level).
    pub(super) async fn records(&self) -> Result<Vec<RecordView>, StoreError> {
        let rows: Vec<RecordRow> = on_pool!(&self.inner.read, pool => sqlx::query_as(
            "SELECT r.record, r.level, r.value, r.player_id, p.name AS player, r.game_id,
                    r.set_at, g.white_kind, g.white_level, g.white_player_id,
                    wp.name AS white_name, g.black_kind, g.black_level, bp.name AS black_name
             FROM records r
             JOIN players p ON p.id = r.player_id
             JOIN games g ON g.id = r.game_id
             LEFT JOIN players wp ON wp.id = g.white_player_id
             LEFT JOIN players bp ON bp.id = g.black_player_id
             ORDER BY r.record, r.level",
        )
        .fetch_all(pool)
        .await)?;
        let mut records: Vec<RecordView> = rows
            .into_iter()
            .filter_map(|row| {
                let record = RECORDS.into_iter().find(|name| *name == row.record)?;
                // The holder's opponent: the other seat of the game.
                let holder_is_white = row.white_player_id.as_deref() == Some(&row.player_id);
                let (kind, level, name) = if holder_is_white {
                    (row.black_kind, row.black_level, row.black_name)
                } else {
                    (row.white_kind, row.white_level, row.white_name)
                };
                let opponent = match (kind.as_str(), level, name) {
                    ("ai", Some(level), _) => format!("level {level}"),
                    (_, _, Some(name)) => name,
                    _ => "anonymous".into(),
                };
                Some(RecordView {
                    record,
                    level: (record == "fastest_checkmate_vs_ai")
                        .then(|| u8::try_from(row.level).ok())
                        .flatten(),
                    value: row.value.round() as i64,
                    player: row.player,
                    opponent: (record != "longest_win_streak").then_some(opponent),
                    game: row.game_id,
                    at: row.set_at,
                })
            })
            .collect();
        records.sort_by_key(|r| (RECORDS.iter().position(|name| *name == r.record), r.level));
        Ok(records)
    }
}

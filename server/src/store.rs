//! The database: SQLite through sqlx, schema in `migrations/`.
//!
//! One query style for the whole workspace: runtime-checked `sqlx::query`
//! with `.bind()`, so a clean CI machine builds without a database or an
//! offline query cache. Every query of the service is in this file.
//!
//! Durability: WAL journal with `synchronous = FULL`. The contract promises
//! that an acknowledged move survives a crash. In WAL mode `NORMAL` already
//! survives a crash of the *process* (SIGKILL), but a commit can be lost if
//! the *machine* loses power or the OS crashes before the WAL is synced; `FULL`
//! syncs the WAL on every commit, closing that window. Moves arrive at human
//! speed (and AI moves at most a few per second per game), so one fsync per
//! move is a price worth paying; WAL keeps readers off the writer's path.

use std::str::FromStr;
use std::time::Duration;

use rookery_engine::game::Termination;
use sqlx::sqlite::{
    SqliteConnectOptions, SqliteJournalMode, SqlitePool, SqlitePoolOptions, SqliteSynchronous,
};
use sqlx::Row;
use tokio::time::Instant;
use uuid::Uuid;

use crate::auth::TokenHash;
use crate::error::ApiError;
use crate::live::game::{Ending, LiveGame, LiveSeat, PlayedMove, PlayerRef};
use crate::protocol::{
    AiScore, ClockSettings, ColorScore, PlayerScore, Scoreboard, Side, Status, Visibility,
};

static MIGRATOR: sqlx::migrate::Migrator = sqlx::migrate!("../migrations");

#[derive(Debug, Clone)]
pub struct Store {
    pool: SqlitePool,
}

/// Milliseconds since the Unix epoch, now.
pub fn now_ms() -> i64 {
    let since_epoch = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default();
    i64::try_from(since_epoch.as_millis()).unwrap_or(i64::MAX)
}

fn is_unique_violation(err: &sqlx::Error) -> bool {
    matches!(err, sqlx::Error::Database(db) if db.is_unique_violation())
}

impl Store {
    /// Opens (creating if missing) the database at `url` and brings its
    /// schema up to date. `url` is `sqlite://path`, `sqlite::memory:` or a
    /// plain file path.
    pub async fn open(url: &str) -> anyhow::Result<Store> {
        use anyhow::Context;
        let url = if url.starts_with("sqlite:") {
            url.to_string()
        } else {
            format!("sqlite://{url}")
        };
        let options = SqliteConnectOptions::from_str(&url)
            .with_context(|| format!("database URL {url:?}"))?
            .create_if_missing(true)
            .journal_mode(SqliteJournalMode::Wal)
            .synchronous(SqliteSynchronous::Full)
            .foreign_keys(true)
            .busy_timeout(Duration::from_secs(5));
        // "Created if missing" includes the directory, so a fresh volume or
        // a path like `data/rookery.db` works on first start.
        let in_memory = url.contains(":memory:") || url.contains("mode=memory");
        if !in_memory {
            if let Some(dir) = options.get_filename().parent() {
                if !dir.as_os_str().is_empty() {
                    std::fs::create_dir_all(dir)
                        .with_context(|| format!("creating directory {}", dir.display()))?;
                }
            }
        }
        // Each connection to `:memory:` is its own empty database: keep
        // exactly one, forever (for tests and throwaway servers).
        let pool = if in_memory {
            SqlitePoolOptions::new()
                .min_connections(1)
                .max_connections(1)
                .idle_timeout(None)
                .max_lifetime(None)
        } else {
            SqlitePoolOptions::new().max_connections(8)
        };
        let pool = pool
            .connect_with(options)
            .await
            .with_context(|| format!("opening database {url:?}"))?;
        MIGRATOR
            .run(&pool)
            .await
            .context("running database migrations")?;
        Ok(Store { pool })
    }

    /// Waits for the connections to finish and closes them (the WAL is
    /// checkpointed when the last connection closes).
    pub async fn close(&self) {
        self.pool.close().await;
    }

    // ------------------------------------------------------------- players

    pub async fn create_player(
        &self,
        id: Uuid,
        name: &str,
        token: &TokenHash,
    ) -> Result<(), ApiError> {
        let result = sqlx::query(
            "INSERT INTO players (id, name, name_key, token_hash, created_at)
             VALUES (?, ?, ?, ?, ?)",
        )
        .bind(id.to_string())
        .bind(name)
        .bind(name.to_lowercase())
        .bind(&token.0)
        .bind(now_ms())
        .execute(&self.pool)
        .await;
        match result {
            Ok(_) => Ok(()),
            Err(err) if is_unique_violation(&err) => Err(ApiError::NameTaken),
            Err(err) => Err(err.into()),
        }
    }

    pub async fn player_by_token(&self, token: &TokenHash) -> Result<Option<PlayerRef>, ApiError> {
        let row = sqlx::query("SELECT id, name FROM players WHERE token_hash = ?")
            .bind(&token.0)
            .fetch_optional(&self.pool)
            .await?;
        Ok(row.map(|row| PlayerRef {
            id: row.get("id"),
            name: row.get("name"),
        }))
    }

    /// Whether `token` is a seat token of some game (to tell a token for
    /// another game, 403, from an unknown one, 401).
    pub async fn is_seat_token(&self, token: &TokenHash) -> Result<bool, ApiError> {
        let row = sqlx::query(
            "SELECT 1 FROM games WHERE white_token_hash = ?1 OR black_token_hash = ?1 LIMIT 1",
        )
        .bind(&token.0)
        .fetch_optional(&self.pool)
        .await?;
        Ok(row.is_some())
    }

    // --------------------------------------------------------------- games

    pub async fn insert_game(&self, live: &LiveGame) -> Result<(), ApiError> {
        let now = now_ms();
        let seat_columns = |side: Side| {
            let seat = live.seat(side);
            (
                if seat.ai_level().is_some() {
                    "ai"
                } else {
                    "human"
                },
                seat.ai_level().map(i64::from),
                seat.player().map(|p| p.id.clone()),
                seat.token().map(|t| t.0.clone()),
            )
        };
        let (wk, wl, wp, wt) = seat_columns(Side::White);
        let (bk, bl, bp, bt) = seat_columns(Side::Black);
        let clock = live.clock_settings();
        let ending = live.ending();
        sqlx::query(
            "INSERT INTO games (id, white_kind, white_level, white_player_id, white_token_hash,
                 black_kind, black_level, black_player_id, black_token_hash, initial_fen,
                 clock_initial_ms, clock_increment_ms, status, result, termination, draw_offer,
                 created_at, updated_at, finished_at, rated, visibility, invite_hash)
             VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        )
        .bind(live.id.to_string())
        .bind(wk)
        .bind(wl)
        .bind(wp)
        .bind(wt)
        .bind(bk)
        .bind(bl)
        .bind(bp)
        .bind(bt)
        .bind(live.game().initial_position().to_fen())
        .bind(clock.map(|c| c.initial_ms as i64))
        .bind(clock.map(|c| c.increment_ms as i64))
        .bind(live.status().as_str())
        .bind(ending.and_then(|e| e.result()))
        .bind(ending.map(|e| e.termination.as_str()))
        .bind(live.draw_offer().map(Side::as_str))
        .bind(live.created_at)
        .bind(now)
        .bind(ending.map(|_| now))
        .bind(live.is_rated())
        .bind(live.visibility().as_str())
        .bind(live.invite().map(|t| t.0.clone()))
        .execute(&self.pool)
        .await?;
        Ok(())
    }

    /// Writes the changed game (and the move that changed it, if any) in one
    /// transaction. Returns once the transaction is committed: durable.
    pub async fn record(&self, live: &LiveGame, mv: Option<&PlayedMove>) -> Result<(), ApiError> {
        let now = now_ms();
        let mut tx = self.pool.begin().await?;
        if let Some(mv) = mv {
            sqlx::query(
                "INSERT INTO moves (game_id, ply, uci, san, white_ms, black_ms, played_at)
                 VALUES (?, ?, ?, ?, ?, ?, ?)",
            )
            .bind(live.id.to_string())
            .bind(mv.ply as i64)
            .bind(&mv.uci)
            .bind(&mv.san)
            .bind(mv.clock_ms.map(|(w, _)| w as i64))
            .bind(mv.clock_ms.map(|(_, b)| b as i64))
            .bind(now)
            .execute(&mut *tx)
            .await?;
        }
        let ending = live.ending();
        let white = live.seat(Side::White);
        let black = live.seat(Side::Black);
        sqlx::query(
            "UPDATE games SET
                 white_player_id = ?, white_token_hash = ?,
                 black_player_id = ?, black_token_hash = ?,
                 status = ?, result = ?, termination = ?, draw_offer = ?,
                 updated_at = ?, finished_at = COALESCE(finished_at, ?)
             WHERE id = ?",
        )
        .bind(white.player().map(|p| p.id.clone()))
        .bind(white.token().map(|t| t.0.clone()))
        .bind(black.player().map(|p| p.id.clone()))
        .bind(black.token().map(|t| t.0.clone()))
        .bind(live.status().as_str())
        .bind(ending.and_then(|e| e.result()))
        .bind(ending.map(|e| e.termination.as_str()))
        .bind(live.draw_offer().map(Side::as_str))
        .bind(now)
        .bind(ending.map(|_| now))
        .bind(live.id.to_string())
        .execute(&mut *tx)
        .await?;
        tx.commit().await?;
        Ok(())
    }

    /// Loads a stored game, replaying its moves. `None` if there is no such
    /// game.
    pub async fn load_game(&self, id: Uuid, now: Instant) -> Result<Option<LiveGame>, ApiError> {
        let Some(row) = sqlx::query(
            "SELECT g.*, wp.name AS white_name, bp.name AS black_name
             FROM games g
             LEFT JOIN players wp ON wp.id = g.white_player_id
             LEFT JOIN players bp ON bp.id = g.black_player_id
             WHERE g.id = ?",
        )
        .bind(id.to_string())
        .fetch_optional(&self.pool)
        .await?
        else {
            return Ok(None);
        };
        let moves =
            sqlx::query("SELECT uci, white_ms, black_ms FROM moves WHERE game_id = ? ORDER BY ply")
                .bind(id.to_string())
                .fetch_all(&self.pool)
                .await?;

        let seat = |side: &str| -> Result<LiveSeat, ApiError> {
            let kind: String = row.try_get(format!("{side}_kind").as_str())?;
            if kind == "ai" {
                let level: Option<i64> = row.try_get(format!("{side}_level").as_str())?;
                let level = level
                    .and_then(|l| u8::try_from(l).ok())
                    .ok_or_else(|| ApiError::internal(format!("game {id}: bad {side} level")))?;
                return Ok(LiveSeat::Ai { level });
            }
            let token: Option<String> = row.try_get(format!("{side}_token_hash").as_str())?;
            let player_id: Option<String> = row.try_get(format!("{side}_player_id").as_str())?;
            let name: Option<String> = row.try_get(format!("{side}_name").as_str())?;
            Ok(LiveSeat::Human {
                token: token.map(TokenHash),
                player: player_id.zip(name).map(|(id, name)| PlayerRef { id, name }),
                connections: 0,
            })
        };
        let seats = [seat("white")?, seat("black")?];
        let clock_initial: Option<i64> = row.try_get("clock_initial_ms")?;
        let clock_increment: Option<i64> = row.try_get("clock_increment_ms")?;
        let clock_settings = clock_initial.map(|initial| ClockSettings {
            initial_ms: initial.max(0) as u64,
            increment_ms: clock_increment.unwrap_or(0).max(0) as u64,
        });
        let termination: Option<String> = row.try_get("termination")?;
        let result: Option<String> = row.try_get("result")?;
        let ending = match termination {
            None => None,
            Some(name) => {
                let termination = Termination::parse(&name)
                    .ok_or_else(|| ApiError::internal(format!("game {id}: termination {name}")))?;
                let winner = match result.as_deref() {
                    Some("1-0") => Some(Side::White),
                    Some("0-1") => Some(Side::Black),
                    _ => None,
                };
                Some(Ending {
                    winner,
                    termination,
                })
            }
        };
        let draw_offer: Option<String> = row.try_get("draw_offer")?;
        let ucis: Vec<String> = moves.iter().map(|m| m.get("uci")).collect();
        let last_clock = moves.last().and_then(|m| {
            let white: Option<i64> = m.get("white_ms");
            let black: Option<i64> = m.get("black_ms");
            Some((white?.max(0) as u64, black?.max(0) as u64))
        });
        let initial_fen: String = row.try_get("initial_fen")?;
        let created_at: i64 = row.try_get("created_at")?;
        let rated: bool = row.try_get("rated")?;
        let visibility: String = row.try_get("visibility")?;
        let visibility = Visibility::parse(&visibility)
            .ok_or_else(|| ApiError::internal(format!("game {id}: visibility {visibility}")))?;
        let invite: Option<String> = row.try_get("invite_hash")?;
        LiveGame::restore(
            id,
            created_at,
            seats,
            clock_settings,
            &initial_fen,
            &ucis,
            last_clock,
            ending,
            draw_offer.as_deref().and_then(Side::parse),
            now,
        )
        .map(|mut live| {
            live.restore_terms(rated, visibility, invite.map(TokenHash));
            Some(live)
        })
        .map_err(|err| ApiError::internal(format!("game {id}: {err}")))
    }

    /// Games not finished yet, oldest first: the ones to resume at start-up.
    pub async fn unfinished_games(&self) -> Result<Vec<Uuid>, ApiError> {
        let rows =
            sqlx::query("SELECT id FROM games WHERE status != 'finished' ORDER BY created_at")
                .fetch_all(&self.pool)
                .await?;
        Ok(rows
            .iter()
            .filter_map(|row| Uuid::parse_str(row.get::<&str, _>("id")).ok())
            .collect())
    }

    /// Game ids, newest first, with one of `statuses`.
    pub async fn list_games(&self, statuses: &[Status], limit: u32) -> Result<Vec<Uuid>, ApiError> {
        let placeholders = vec!["?"; statuses.len()].join(", ");
        let sql = format!(
            "SELECT id FROM games WHERE status IN ({placeholders})
             ORDER BY created_at DESC, rowid DESC LIMIT ?"
        );
        let mut query = sqlx::query(&sql);
        for status in statuses {
            query = query.bind(status.as_str());
        }
        let rows = query.bind(i64::from(limit)).fetch_all(&self.pool).await?;
        Ok(rows
            .iter()
            .filter_map(|row| Uuid::parse_str(row.get::<&str, _>("id")).ok())
            .collect())
    }

    /// Waiting open games (open seeks), newest first.
    pub async fn list_open_seeks(&self, limit: u32) -> Result<Vec<Uuid>, ApiError> {
        let rows = sqlx::query(
            "SELECT id FROM games WHERE status = 'waiting' AND visibility = 'open'
             ORDER BY created_at DESC LIMIT ?",
        )
        .bind(i64::from(limit))
        .fetch_all(&self.pool)
        .await?;
        Ok(rows
            .iter()
            .filter_map(|row| Uuid::parse_str(row.get::<&str, _>("id")).ok())
            .collect())
    }

    /// The scoreboard from the recorded results. Aborted games (no result)
    /// count nowhere; casual games (`rated = 0`: a custom start or a clock
    /// under the minimum) count only in the separate `casual` tally, so a
    /// custom-FEN mate in one or a sub-second flag farms nothing.
    pub async fn scoreboard(&self) -> Result<Scoreboard, ApiError> {
        let colors = sqlx::query(
            "SELECT
                 COALESCE(SUM(rated = 1 AND result = '1-0'), 0) AS white,
                 COALESCE(SUM(rated = 1 AND result = '0-1'), 0) AS black,
                 COALESCE(SUM(rated = 1 AND result = '1/2-1/2'), 0) AS draws,
                 COALESCE(SUM(rated = 0 AND result = '1-0'), 0) AS casual_white,
                 COALESCE(SUM(rated = 0 AND result = '0-1'), 0) AS casual_black,
                 COALESCE(SUM(rated = 0 AND result = '1/2-1/2'), 0) AS casual_draws
             FROM games WHERE status = 'finished' AND result IS NOT NULL",
        )
        .fetch_one(&self.pool)
        .await?;
        // One row per seat of each finished game, scored from that seat's
        // point of view.
        const SEATS: &str = "
            WITH seats AS (
                SELECT white_kind AS kind, white_level AS level, white_player_id AS player,
                       CASE result WHEN '1-0' THEN 1 WHEN '0-1' THEN -1 ELSE 0 END AS score
                FROM games WHERE status = 'finished' AND result IS NOT NULL AND rated = 1
                UNION ALL
                SELECT black_kind, black_level, black_player_id,
                       CASE result WHEN '0-1' THEN 1 WHEN '1-0' THEN -1 ELSE 0 END
                FROM games WHERE status = 'finished' AND result IS NOT NULL AND rated = 1
            )";
        let players = sqlx::query(&format!(
            "{SEATS}
             SELECT p.name AS name, COUNT(*) AS games,
                    SUM(score = 1) AS wins, SUM(score = -1) AS losses, SUM(score = 0) AS draws
             FROM seats JOIN players p ON p.id = seats.player
             GROUP BY p.id
             ORDER BY (SUM(score = 1) * 2 + SUM(score = 0)) DESC, COUNT(*) DESC, p.name_key
             LIMIT 100"
        ))
        .fetch_all(&self.pool)
        .await?;
        let ai = sqlx::query(&format!(
            "{SEATS}
             SELECT level, COUNT(*) AS games,
                    SUM(score = 1) AS wins, SUM(score = -1) AS losses, SUM(score = 0) AS draws
             FROM seats WHERE kind = 'ai'
             GROUP BY level ORDER BY level"
        ))
        .fetch_all(&self.pool)
        .await?;
        Ok(Scoreboard {
            colors: ColorScore {
                white: colors.try_get("white")?,
                black: colors.try_get("black")?,
                draws: colors.try_get("draws")?,
            },
            casual: ColorScore {
                white: colors.try_get("casual_white")?,
                black: colors.try_get("casual_black")?,
                draws: colors.try_get("casual_draws")?,
            },
            players: players
                .iter()
                .map(|row| {
                    Ok(PlayerScore {
                        name: row.try_get("name")?,
                        games: row.try_get("games")?,
                        wins: row.try_get("wins")?,
                        losses: row.try_get("losses")?,
                        draws: row.try_get("draws")?,
                    })
                })
                .collect::<Result<_, sqlx::Error>>()?,
            ai: ai
                .iter()
                .map(|row| {
                    let level: i64 = row.try_get("level")?;
                    Ok(AiScore {
                        level: u8::try_from(level).unwrap_or(0),
                        games: row.try_get("games")?,
                        wins: row.try_get("wins")?,
                        losses: row.try_get("losses")?,
                        draws: row.try_get("draws")?,
                    })
                })
                .collect::<Result<_, sqlx::Error>>()?,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_missing_database_and_its_directory_are_created() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("new").join("deeper").join("rookery.db");
        let store = Store::open(&format!("sqlite://{}", path.display()))
            .await
            .unwrap();
        store.close().await;
        assert!(path.exists());
        // A plain path too.
        let plain = dir.path().join("plain").join("x.db");
        let store = Store::open(plain.to_str().unwrap()).await.unwrap();
        store.close().await;
        assert!(plain.exists());
    }
}

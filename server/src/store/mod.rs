//! The database: SQLite (the default, schema in `migrations/`) or
//! PostgreSQL (`--database postgres://…`, schema in `migrations/postgres/`,
//! same version numbers), through sqlx.
//!
//! One query style for the whole workspace: runtime-checked `sqlx::query`
//! with `.bind()` and `$1`-style placeholders, rows read into
//! `sqlx::FromRow` structs, so a clean CI machine builds without a database
//! or an offline query cache. Every query of the service is in this module
//! (here, in [`rows`], in `ratings` and in `analysis`), written once for
//! both databases: see [`backend`] for how.
//!
//! PostgreSQL: every connection runs with `synchronous_commit = on`, so a
//! commit (an acknowledged move) is flushed to the server's log before the
//! server answers; the same group commit and savepoints apply.
//!
//! Durability: WAL journal with `synchronous = FULL`. The contract promises
//! that an acknowledged move survives a crash. In WAL mode `NORMAL` already
//! survives a crash of the *process* (SIGKILL), but a commit can be lost if
//! the *machine* loses power or the OS crashes before the WAL is synced; `FULL`
//! syncs the WAL on every commit, closing that window.
//!
//! Group commit: every write goes to one writer task ([`writer`]), which
//! takes whatever writes are queued (up to `max_batch`), runs them in one
//! transaction and acknowledges each once that transaction is committed. One
//! fsync then covers the moves of many games, so the durable move rate grows
//! with the number of games moving at once instead of being one fsync per
//! move. Each write runs inside its own savepoint: a write the database
//! refuses (a taken name, a broken constraint) is rolled back alone, while a
//! failure of the database itself (disk full, read-only, locked, I/O) fails
//! the whole batch, and a failed `COMMIT` is reported as ambiguous (the
//! writes may or may not be durable) so the game reloads what is stored.
//!
//! Reads (lists, the scoreboard, loading a game, tokens) go through a
//! separate read-only pool: in WAL mode they never wait for the writer, and a
//! heavy read never delays a commit.

pub mod accounts;
pub mod analysis;
mod backend;
pub mod challenges;
mod error;
pub mod leases;
pub mod lichess;
mod ratings;
mod rows;
mod writer;

use std::str::FromStr;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use sqlx::postgres::{PgConnectOptions, PgPoolOptions};
use sqlx::sqlite::{SqliteConnectOptions, SqliteJournalMode, SqlitePoolOptions, SqliteSynchronous};
#[cfg(test)]
use tokio::sync::oneshot;
use tokio::time::Instant;
use uuid::Uuid;

pub use self::error::StoreError;
use crate::live::game::{LiveGame, PlayedMove, PlayerRef};
use crate::protocol::{
    AiScore, ColorScore, GameState, PlayerScore, Scoreboard, SeatRating, Status,
    PROVISIONAL_DEVIATION,
};
use crate::token::TokenHash;

use self::backend::{on_pool, Dialect, Pool};
pub use self::leases::{Fence, Lease};
pub use self::ratings::{Cursor, PlayerGamesFilter};
pub use self::rows::StoredGame;
use self::rows::{GameRow, ListRow};
pub use self::writer::WriterStats;
use self::writer::{Write, WriteError, Writer};

static MIGRATOR: sqlx::migrate::Migrator = sqlx::migrate!("../migrations");
static POSTGRES_MIGRATOR: sqlx::migrate::Migrator = sqlx::migrate!("../migrations/postgres");

/// How long a scoreboard answer is reused: it is a scan of every finished
/// game. A game that finishes drops it at once, so the cache only spares
/// the repeated reads between results (a page refreshed, many viewers).
const SCOREBOARD_TTL: Duration = Duration::from_secs(2);

/// The last scoreboard read and when; `generation` counts the finished
/// games recorded, so a read that raced with one is not kept.
#[derive(Default)]
struct ScoreboardCache {
    generation: u64,
    board: Option<(Instant, Scoreboard)>,
}

/// Tuning of [`Store::open_with`].
#[derive(Debug, Clone, Copy)]
pub struct StoreOptions {
    /// Most writes committed in one transaction (1: one commit per write).
    pub max_batch: usize,
    /// How long a write waits for a lock held by another process before it
    /// fails with `unavailable`.
    pub busy_timeout: Duration,
}

impl Default for StoreOptions {
    fn default() -> StoreOptions {
        StoreOptions {
            max_batch: 256,
            busy_timeout: Duration::from_secs(5),
        }
    }
}

#[derive(Clone)]
pub struct Store {
    inner: Arc<StoreInner>,
}

struct StoreInner {
    writer: Writer,
    write_pool: Pool,
    read: Pool,
    /// When this server started, ms since the Unix epoch.
    started_at: i64,
    /// The heartbeat the previous run left: when it was last known running.
    previous_alive_at: i64,
    scoreboard: Mutex<ScoreboardCache>,
}

impl std::fmt::Debug for Store {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Store").finish_non_exhaustive()
    }
}

/// Milliseconds since the Unix epoch, now.
/// Game ids read as text; a row that is not a UUID names no game.
fn parse_ids(ids: &[String]) -> Vec<Uuid> {
    ids.iter()
        .filter_map(|id| Uuid::parse_str(id).ok())
        .collect()
}

pub fn now_ms() -> i64 {
    let since_epoch = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default();
    i64::try_from(since_epoch.as_millis()).unwrap_or(i64::MAX)
}

impl Store {
    /// [`Store::open_with`] the default options.
    pub async fn open(url: &str) -> anyhow::Result<Store> {
        Store::open_with(url, StoreOptions::default()).await
    }

    /// Opens (creating if missing) the database at `url`, brings its schema
    /// up to date and starts the writer. `url` is `sqlite://path`,
    /// `sqlite::memory:`, a plain file path, or `postgres://…` (the
    /// database must exist; its tables are created).
    pub async fn open_with(url: &str, options: StoreOptions) -> anyhow::Result<Store> {
        let (write_pool, read) =
            if url.starts_with("postgres://") || url.starts_with("postgresql://") {
                open_postgres(url).await?
            } else {
                open_sqlite(url, options).await?
            };
        // Read before the writer stamps its own.
        let previous_alive_at: Option<i64> = on_pool!(&write_pool, pool =>
            sqlx::query_scalar("SELECT alive_at FROM heartbeat WHERE id = 1")
                .fetch_optional(pool)
                .await)
        .map_err(|err| anyhow::anyhow!("reading the heartbeat: {err}"))?;
        let writer = Writer::start(write_pool.clone(), options.max_batch.max(1));
        Ok(Store {
            inner: Arc::new(StoreInner {
                writer,
                write_pool,
                read,
                started_at: now_ms(),
                previous_alive_at: previous_alive_at.unwrap_or_else(now_ms),
                scoreboard: Mutex::new(ScoreboardCache::default()),
            }),
        })
    }

    /// Finishes the queued writes, stamps the heartbeat, and closes the
    /// connections (the WAL is checkpointed when the last one closes).
    pub async fn close(&self) {
        self.inner.writer.stop().await;
        self.inner.read.close().await;
        self.inner.write_pool.close().await;
    }

    /// Which database this store runs on.
    fn dialect(&self) -> Dialect {
        self.inner.read.dialect()
    }

    /// Counters of the writer (batches and writes committed).
    pub fn writer_stats(&self) -> WriterStats {
        self.inner.writer.stats()
    }

    /// How long the side to move of a game whose turn began at
    /// `turn_started_at` (ms since the epoch) in a row written at
    /// `written_at` has been thinking, counting only time a server was
    /// running.
    ///
    /// A row this run wrote (at or after its start) holds a turn start
    /// that already leaves out any downtime before this run: a resumed
    /// clock is stored with its thinking so far folded in, so the turn
    /// start may lie before this run's start without meaning "before the
    /// stop". A row an earlier run wrote counts that run up to its last
    /// heartbeat, and this run since it started.
    pub fn thinking_time(&self, turn_started_at: i64, written_at: i64, now_ms: i64) -> Duration {
        let started = self.inner.started_at;
        let spent = if written_at >= started || turn_started_at >= started {
            now_ms - turn_started_at
        } else {
            (self.inner.previous_alive_at - turn_started_at).max(0) + (now_ms - started).max(0)
        };
        Duration::from_millis(u64::try_from(spent).unwrap_or(0))
    }

    async fn write(&self, write: Write) -> Result<(), WriteError> {
        self.inner.writer.submit(write).await
    }

    /// Queues `write` and returns the receiver of its outcome at once (tests
    /// fill one batch this way).
    #[cfg(test)]
    fn submit_now(&self, write: Write) -> oneshot::Receiver<Result<(), WriteError>> {
        self.inner.writer.submit_now(write)
    }

    // ------------------------------------------------------------- players

    pub async fn create_player(
        &self,
        id: Uuid,
        name: &str,
        token: &TokenHash,
    ) -> Result<(), StoreError> {
        let write = Write::CreatePlayer {
            id: id.to_string(),
            name: name.to_string(),
            token_hash: token.0.clone(),
            created_at: now_ms(),
        };
        match self.write(write).await {
            Ok(()) => Ok(()),
            Err(WriteError::Rejected(cause)) if cause.is_unique_violation() => {
                Err(StoreError::NameTaken)
            }
            Err(err) => Err(err.into()),
        }
    }

    pub async fn player_by_token(
        &self,
        token: &TokenHash,
    ) -> Result<Option<PlayerRef>, StoreError> {
        let row: Option<(String, String, f64, f64)> = on_pool!(&self.inner.read, pool =>
            sqlx::query_as(
                "SELECT id, name, rating, rating_deviation FROM players WHERE token_hash = $1",
            )
            .bind(&token.0)
            .fetch_optional(pool)
            .await)?;
        Ok(row.map(|(id, name, rating, deviation)| PlayerRef {
            id,
            name,
            rating: SeatRating::of(rating, deviation),
        }))
    }

    /// Whether `token` is a seat token of some game (to tell a token for
    /// another game, 403, from an unknown one, 401).
    pub async fn is_seat_token(&self, token: &TokenHash) -> Result<bool, StoreError> {
        let row: Option<String> = on_pool!(&self.inner.read, pool => sqlx::query_scalar(
            "SELECT id FROM games WHERE white_token_hash = $1 OR black_token_hash = $1 LIMIT 1",
        )
        .bind(&token.0)
        .fetch_optional(pool)
        .await)?;
        Ok(row.is_some())
    }

    // --------------------------------------------------------------- games

    pub async fn insert_game(&self, live: &LiveGame) -> Result<(), StoreError> {
        let now = now_ms();
        let game = StoredGame::of(live, Instant::now(), now);
        let history = live
            .history()
            .iter()
            .map(|mv| rows::StoredMove::of(live.id, mv, now))
            .collect();
        Ok(self.write(Write::InsertGame { game, history }).await?)
    }

    /// Writes the changed game (and the move that changed it, if any) in one
    /// transaction, with other games' writes. Returns once that transaction
    /// is committed: durable.
    pub async fn record(&self, live: &LiveGame, mv: Option<&PlayedMove>) -> Result<(), StoreError> {
        self.record_change(live, mv, None, None, None).await
    }

    /// [`Store::record`], and in the same transaction: the plies from
    /// `taken_back_from` on deleted (a takeback), a rematch game inserted.
    /// With a `fence` (a cluster node's lease), the write is stored only if
    /// the lease is still the fence's; otherwise it fails with
    /// [`StoreError::LeaseLost`] and nothing of it is stored.
    pub async fn record_change(
        &self,
        live: &LiveGame,
        mv: Option<&PlayedMove>,
        taken_back_from: Option<usize>,
        rematch: Option<&LiveGame>,
        fence: Option<&Fence>,
    ) -> Result<(), StoreError> {
        let now = now_ms();
        let instant = Instant::now();
        let game = StoredGame::of(live, instant, now);
        let mv = mv.map(|mv| rows::StoredMove::of(live.id, mv, now));
        let write = Write::UpdateGame {
            game,
            mv,
            taken_back_from: taken_back_from.map(|ply| ply as i64),
            rematch: rematch.map(|new| Box::new(StoredGame::of(new, instant, now))),
            fence: fence.cloned(),
        };
        self.write(write).await?;
        if live.is_finished() {
            // A new result: the next scoreboard read counts it.
            let mut cache = self.scoreboard_cache();
            cache.generation += 1;
            cache.board = None;
        }
        Ok(())
    }

    /// Loads a stored game, replaying its moves on a blocking thread. `None`
    /// if there is no such game.
    pub async fn load_game(&self, id: Uuid, now: Instant) -> Result<Option<LiveGame>, StoreError> {
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
        let store = self.clone();
        // A long game's replay is real work: keep it off the async workers.
        tokio::task::spawn_blocking(move || row.restore(&moves, &store, now_ms(), now))
            .await
            .map_err(StoreError::internal)?
            .map(Some)
    }

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

    async fn states_of(&self, rows: Vec<ListRow>) -> Result<Vec<GameState>, StoreError> {
        let store = self.clone();
        // Legal moves of each position (and the replay of a game stored
        // before 0002) are CPU work: off the async workers.
        tokio::task::spawn_blocking(move || {
            let now = now_ms();
            let instant = Instant::now();
            rows.into_iter()
                .map(|row| row.state(&store, now, instant))
                .collect()
        })
        .await
        .map_err(StoreError::internal)?
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
}

/// The SQLite pools: the writer's one connection, and read-only ones.
async fn open_sqlite(url: &str, options: StoreOptions) -> anyhow::Result<(Pool, Pool)> {
    use anyhow::Context;
    let url = if url.starts_with("sqlite:") {
        url.to_string()
    } else {
        format!("sqlite://{url}")
    };
    let connect = SqliteConnectOptions::from_str(&url)
        .with_context(|| format!("database URL {url:?}"))?
        .create_if_missing(true)
        .journal_mode(SqliteJournalMode::Wal)
        .synchronous(SqliteSynchronous::Full)
        .foreign_keys(true)
        .busy_timeout(options.busy_timeout);
    // "Created if missing" includes the directory, so a fresh volume or
    // a path like `data/rookery.db` works on first start.
    let in_memory = url.contains(":memory:") || url.contains("mode=memory");
    if !in_memory {
        if let Some(dir) = connect.get_filename().parent() {
            if !dir.as_os_str().is_empty() {
                std::fs::create_dir_all(dir)
                    .with_context(|| format!("creating directory {}", dir.display()))?;
            }
        }
    }
    // The writer's one connection. Each connection to `:memory:` is its
    // own empty database, so there it is kept forever and serves the
    // reads too (for tests and throwaway servers).
    let write_pool = SqlitePoolOptions::new()
        .min_connections(1)
        .max_connections(1)
        .idle_timeout(None)
        .max_lifetime(None)
        .connect_with(connect.clone())
        .await
        .with_context(|| format!("opening database {url:?}"))?;
    let backfill = ratings::needs_backfill(&write_pool)
        .await
        .context("reading the schema")?;
    MIGRATOR
        .run(&write_pool)
        .await
        .context("running database migrations")?;
    if backfill {
        // Results stored before ratings existed count once, now.
        let counted = ratings::backfill(&write_pool)
            .await
            .context("rating the games stored before migration 0005")?;
        if counted > 0 {
            tracing::info!(games = counted, "rated the games stored before ratings");
        }
    }
    let read = if in_memory {
        write_pool.clone()
    } else {
        SqlitePoolOptions::new()
            .max_connections(4)
            .connect_with(connect.read_only(true))
            .await
            .with_context(|| format!("opening database {url:?} for reading"))?
    };
    Ok((Pool::Sqlite(write_pool), Pool::Sqlite(read)))
}

/// The PostgreSQL pools: the writer's one connection (group commit, as with
/// SQLite) and a few for reads. Several nodes may migrate at once: sqlx
/// takes an advisory lock around the migrations.
async fn open_postgres(url: &str) -> anyhow::Result<(Pool, Pool)> {
    use anyhow::Context;
    let connect = PgConnectOptions::from_str(url)
        .context("database URL (postgres://user:password@host:port/database)")?
        .options([("synchronous_commit", "on")]);
    let write_pool = PgPoolOptions::new()
        .min_connections(1)
        .max_connections(1)
        .acquire_timeout(Duration::from_secs(10))
        .connect_with(connect.clone())
        .await
        .context("connecting to PostgreSQL")?;
    POSTGRES_MIGRATOR
        .run(&write_pool)
        .await
        .context("running database migrations")?;
    let read = PgPoolOptions::new()
        .max_connections(8)
        .acquire_timeout(Duration::from_secs(10))
        .connect_with(connect)
        .await
        .context("connecting to PostgreSQL for reading")?;
    Ok((Pool::Postgres(write_pool), Pool::Postgres(read)))
}

/// The query of a list of games with one of `statuses`, newest first. Each
/// filter reads an index of migrations/0002 backwards (`created_at DESC,
/// rowid DESC` with no sort): `status != 'finished'` selects the partial
/// index of unfinished games.
/// The query of the public list: private games (friend games, private
/// rematches) are not listed (issue 21); they stay readable by their id.
fn list_sql(dialect: Dialect, statuses: &[Status]) -> Result<String, StoreError> {
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
fn open_seeks_sql(dialect: Dialect) -> String {
    ListRow::select(
        dialect,
        "WHERE g.status = 'waiting' AND g.visibility = 'open'",
        "ORDER BY g.created_at DESC LIMIT $1",
    )
}

#[cfg(test)]
mod tests;

/// What [`Store::readiness`] found wrong, if anything.
impl Store {
    /// The readiness check (`GET /readyz`): a write goes through the writer
    /// (its batch stamps the heartbeat row, so a locked, read-only or full
    /// database fails it), and every migration this build knows is
    /// applied. `Ok(None)`: ready; `Ok(Some(reason))`: not ready.
    pub async fn readiness(&self) -> Result<Option<String>, StoreError> {
        if let Err(err) = self.write(Write::Probe).await {
            return Ok(Some(format!(
                "database write failed: {}",
                StoreError::from(err)
            )));
        }
        let known = match self.dialect() {
            Dialect::Sqlite => MIGRATOR.iter().count(),
            Dialect::Postgres => POSTGRES_MIGRATOR.iter().count(),
        };
        let applied: i64 = on_pool!(&self.inner.read, pool => sqlx::query_scalar(
            "SELECT COUNT(*) FROM _sqlx_migrations WHERE success",
        )
        .fetch_one(pool)
        .await)?;
        if usize::try_from(applied).unwrap_or(0) < known {
            return Ok(Some(format!(
                "database migrations: {applied} of {known} applied"
            )));
        }
        Ok(None)
    }
}

/// `rookery-server backup` (issue 25): a consistent copy of a SQLite
/// database, made while a server writes to it. `VACUUM INTO` reads the
/// database in one read transaction (in WAL mode, writers go on meanwhile)
/// and writes a compact copy: every write committed before it began is in
/// the copy, none after. PostgreSQL databases are backed up with `pg_dump`
/// (the README says how).
pub async fn backup(url: &str, to: &std::path::Path) -> anyhow::Result<u64> {
    if url.starts_with("postgres://") || url.starts_with("postgresql://") {
        anyhow::bail!("this is a PostgreSQL database: back it up with pg_dump (see the README)");
    }
    if to.exists() {
        anyhow::bail!(
            "{} exists already: a backup never overwrites a file",
            to.display()
        );
    }
    let target = to
        .to_str()
        .ok_or_else(|| anyhow::anyhow!("the backup path must be UTF-8"))?
        .to_string();
    let url = if url.starts_with("sqlite:") {
        url.to_string()
    } else {
        format!("sqlite://{url}")
    };
    let options = SqliteConnectOptions::from_str(&url)?
        .create_if_missing(false)
        .busy_timeout(Duration::from_secs(30));
    let pool = SqlitePoolOptions::new()
        .max_connections(1)
        .connect_with(options)
        .await
        .map_err(|err| anyhow::anyhow!("opening {url}: {err}"))?;
    let copied = sqlx::query("VACUUM INTO $1")
        .bind(&target)
        .execute(&pool)
        .await
        .map_err(|err| anyhow::anyhow!("copying {url} to {target}: {err}"));
    pool.close().await;
    copied?;
    Ok(std::fs::metadata(to)?.len())
}

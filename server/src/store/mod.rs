//! The database: SQLite (the default, schema in `migrations/`) or
//! PostgreSQL (`--database postgres://…`, schema in `migrations/postgres/`,
//! same version numbers), through sqlx.
//!
//! One query style for the whole workspace: runtime-checked `sqlx::query`
//! with `.bind()` and `$1`-style placeholders, rows read into
//! `sqlx::FromRow` structs, so a clean CI machine builds without a database
//! or an offline query cache. Every query of the service is in this module
//! (the files below), written once for both databases: see [`backend`] for
//! how.
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
//! move. A write the database refuses (a taken name, a broken constraint)
//! fails alone: the batch is run again with a savepoint around each write
//! (the first attempt has none, as refusals are rare), while a
//! failure of the database itself (disk full, read-only, locked, I/O) fails
//! the whole batch, and a failed `COMMIT` is reported as ambiguous (the
//! writes may or may not be durable) so the game reloads what is stored.
//!
//! Reads (lists, the scoreboard, loading a game, tokens) go through a
//! separate read-only pool: in WAL mode they never wait for the writer, and a
//! heavy read never delays a commit.
//!
//! The files of this module, each one concern (queries as `impl Store`
//! blocks beside their rows):
//!
//! - `mod.rs`: the [`Store`] itself, opening (pools, migrations, the
//!   one-time rating backfill) and closing, the clock across restarts.
//! - `accounts.rs`: accounts, passwords, sessions and personal API tokens.
//! - `analysis.rs`: post-game analysis jobs and their evaluations.
//! - `backend.rs`: SQLite or PostgreSQL behind one pool type and one query.
//! - `challenges.rs`: challenges by name, and the game an accepted one makes.
//! - `error.rs`: [`StoreError`], what can go wrong below the game's floor.
//! - `games.rs`: a game's rows: insert, record a change, load by replay;
//!   the games to resume and the stale ones.
//! - `leases.rs`: a cluster's game leases and their fences.
//! - `lichess.rs`: what the lichess-compatible API keeps (bots, chat).
//! - `lists.rs`: stored games as states without replay: one game, the
//!   public lists, open seeks.
//! - `ops.rs`: the readiness check and `rookery-server backup`.
//! - `players.rs`: registered players: created, found by token or name,
//!   their page and their games a page at a time ([`Cursor`]).
//! - `ratings.rs`: counting a result once: Glicko-2, streaks, records, and
//!   the backfill of results stored before ratings.
//! - `rows.rs`: the typed rows written and read, with their SQL columns.
//! - `social.rs`: follows, blocks, reports, moderators and their audit
//!   log, notices, chat timeouts, closed accounts (issue 37).
//! - `scoreboard.rs`: the scoreboard and the records, with its cache.
//! - `swiss.rs`: Swiss tournaments, their players, pairings and results,
//!   and the director's lease (migrations/0015).
//! - `teams.rs`: teams, members and join requests (migrations/0015).
//! - `tests.rs`: unit tests of the writer (batches, refusals, fences), the
//!   list queries, takebacks and the clock across restarts.
//! - `writer.rs`: the one writer task: group commit, savepoints, heartbeat.

pub mod accounts;
pub mod analysis;
pub mod arena;
mod backend;
pub mod challenges;
mod error;
mod games;
pub mod leases;
pub mod lichess;
mod lists;
mod ops;
mod players;
pub mod pools;
mod ratings;
pub mod recovery;
mod retention;
mod rows;
mod scoreboard;
pub mod social;
pub mod swiss;
pub mod teams;
mod writer;

use std::str::FromStr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use sqlx::postgres::{PgConnectOptions, PgPoolOptions};
use sqlx::sqlite::{SqliteConnectOptions, SqliteJournalMode, SqlitePoolOptions, SqliteSynchronous};
#[cfg(test)]
use tokio::sync::oneshot;
use uuid::Uuid;

pub use self::error::StoreError;
pub use self::games::MoveClocks;

use self::backend::{on_pool, Dialect, Pool};
pub use self::leases::{Fence, Lease};
pub use self::ops::backup;
pub use self::players::{Cursor, PlayerGamesFilter, PlayerHit};
pub use self::retention::RetentionCutoffs;
pub use self::rows::StoredGame;
use self::scoreboard::ScoreboardCache;
pub use self::writer::WriterStats;
use self::writer::{Write, WriteError, Writer};

// What the unit tests (`tests.rs`, `use super::*`) name from the files
// this module is split into.
#[cfg(test)]
use self::lists::{list_sql, open_seeks_sql};
#[cfg(test)]
use crate::live::game::LiveGame;
#[cfg(test)]
use crate::protocol::Status;
#[cfg(test)]
use tokio::time::Instant;

static MIGRATOR: sqlx::migrate::Migrator = sqlx::migrate!("../migrations");
static POSTGRES_MIGRATOR: sqlx::migrate::Migrator = sqlx::migrate!("../migrations/postgres");

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

/// Game ids read as text; a row that is not a UUID names no game.
fn parse_ids(ids: &[String]) -> Vec<Uuid> {
    ids.iter()
        .filter_map(|id| Uuid::parse_str(id).ok())
        .collect()
}

/// Milliseconds since the Unix epoch, now.
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

#[cfg(test)]
mod tests;

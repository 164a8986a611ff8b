//! The one writer: group commit.
//!
//! Writes queue on a bounded channel (a full queue makes writers wait: back
//! pressure, not unbounded memory). The writer task takes the first write,
//! then everything else already queued up to `max_batch`, and runs them in
//! one `BEGIN IMMEDIATE … COMMIT` (PostgreSQL: `BEGIN … COMMIT`). With
//! `synchronous = FULL` (PostgreSQL: `synchronous_commit = on`) the commit is
//! one fsync of the log for the whole batch. Writes arriving while a batch
//! commits wait for the next one, so batches grow exactly when the disk is
//! the bottleneck and a lone write is committed at once (no added delay).
//!
//! A write the database refuses (a constraint: a taken name, a missing game)
//! fails alone, reported [`WriteError::Rejected`]: the batch is then run
//! again with a savepoint per write (see [`run_batch`]). If the database itself fails (disk
//! full, read-only, locked past the busy timeout, I/O error), the
//! transaction is rolled back and every write of the batch gets
//! [`WriteError::Failed`]: nothing of it is stored. If the `COMMIT` fails,
//! SQLite may or may not have made it durable, so every write gets
//! [`WriteError::Ambiguous`] and its game reloads what is stored.
//!
//! The writer also stamps the heartbeat (see migrations/0002) in every batch,
//! and alone when idle for [`HEARTBEAT`].

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use sqlx::Connection;
use tokio::sync::{mpsc, oneshot};

use super::backend::{on_conn, on_pool, Conn, Pool};
use super::leases::{fencing_disabled, Fence};
use super::now_ms;
use super::ratings;
use super::rows::{StoredGame, StoredMove};

/// How often an idle writer stamps the heartbeat. After a crash, at most this
/// much of the side to move's thinking time goes uncharged.
pub const HEARTBEAT: Duration = Duration::from_secs(2);

/// Writes that may wait for the writer before writers are made to wait.
const QUEUE: usize = 4096;

/// One write the service makes.
#[derive(Debug, Clone)]
pub enum Write {
    CreatePlayer {
        id: String,
        name: String,
        token_hash: String,
        created_at: i64,
    },
    /// A new game, with the moves it starts with (an imported history).
    InsertGame {
        game: StoredGame,
        history: Vec<StoredMove>,
    },
    /// A game's new state and the move that made it, if any.
    UpdateGame {
        game: StoredGame,
        mv: Option<StoredMove>,
        /// A takeback: the plies from this one on are deleted first.
        taken_back_from: Option<i64>,
        /// An agreed rematch: the new game, inserted with this change.
        rematch: Option<Box<StoredGame>>,
        /// In a cluster: the writer's lease of the game, checked first in
        /// the transaction (a write whose lease is gone is not stored).
        fence: Option<Fence>,
    },
    /// Post-game analysis (migrations/0004).
    Analysis(super::analysis::AnalysisWrite),
    /// Accounts, sessions and API tokens (migrations/0009).
    Account(super::accounts::AccountWrite),
    /// Challenges (migrations/0010).
    Challenge(super::challenges::ChallengeWrite),
    /// Bot accounts and chat (migrations/0011).
    Lichess(super::lichess::LichessWrite),
    /// Teams, members and join requests (migrations/0015).
    Team(super::teams::TeamWrite),
    /// Swiss tournaments (migrations/0015).
    Swiss(Box<super::swiss::SwissWrite>),
    /// Follows, blocks, reports, moderators (migrations/0014).
    Social(super::social::SocialWrite),
    /// Arena tournaments (migrations/0016).
    Arena(super::arena::ArenaWrite),
    /// A finished game and its rows, by the retention sweep
    /// (store/retention.rs).
    DeleteGame { id: String },
    /// Writes nothing itself: its batch's heartbeat stamp is the readiness
    /// check's proof that a write goes through.
    Probe,
}

impl Write {
    /// The game and lease a write must still hold to be stored.
    fn fence(&self) -> Option<(&str, &Fence)> {
        match self {
            Write::UpdateGame {
                game,
                fence: Some(fence),
                ..
            } => Some((&game.id, fence)),
            _ => None,
        }
    }

    async fn apply(&self, mut conn: Conn<'_>) -> Result<(), sqlx::Error> {
        match self {
            Write::CreatePlayer {
                id,
                name,
                token_hash,
                created_at,
            } => {
                on_conn!(conn, conn => sqlx::query(
                    "INSERT INTO players (id, name, name_key, token_hash, created_at)
                     VALUES ($1, $2, $3, $4, $5)",
                )
                .bind(id)
                .bind(name)
                .bind(name.to_lowercase())
                .bind(token_hash)
                .bind(created_at)
                .execute(conn)
                .await
                .map(|_| ()))
            }
            Write::InsertGame { game, history } => {
                game.insert(conn.reborrow()).await?;
                for mv in history {
                    mv.insert(conn.reborrow()).await?;
                }
                Ok(())
            }
            Write::UpdateGame {
                game,
                mv,
                taken_back_from,
                rematch,
                fence,
            } => {
                // The write that finishes the game counts its result, in
                // this transaction and never again (see store/ratings.rs).
                let finishing = game.status == "finished"
                    && !ratings::is_stored_finished(conn.reborrow(), &game.id).await?;
                if let Some(ply) = taken_back_from {
                    on_conn!(conn.reborrow(), conn =>
                        sqlx::query("DELETE FROM moves WHERE game_id = $1 AND ply >= $2")
                            .bind(&game.id)
                            .bind(ply)
                            .execute(conn)
                            .await
                            .map(|_| ()))?;
                }
                if let Some(mv) = mv {
                    mv.insert_fenced(conn.reborrow(), fence.as_ref()).await?;
                }
                game.update(conn.reborrow()).await?;
                if let Some(rematch) = rematch {
                    rematch.insert(conn.reborrow()).await?;
                }
                if finishing {
                    ratings::game_finished(conn, &game.id, game.updated_at).await?;
                }
                Ok(())
            }
            Write::Analysis(write) => write.apply(conn).await,
            Write::Account(write) => write.apply(conn).await,
            Write::Challenge(write) => write.apply(conn).await,
            Write::Lichess(write) => write.apply(conn).await,
            Write::Team(write) => write.apply(conn).await,
            Write::Swiss(write) => write.apply(conn).await,
            Write::Social(write) => write.apply(conn).await,
            Write::Arena(write) => write.apply(conn).await,
            Write::DeleteGame { id } => super::retention::delete_game(conn, id).await,
            Write::Probe => Ok(()),
        }
    }
}

/// Why a write is not (known to be) stored.
#[derive(Debug)]
pub enum WriteError {
    /// The database refused this write (a constraint); nothing of it is
    /// stored, the rest of its batch is.
    Rejected(Constraint),
    /// The database failed; nothing of the batch is stored.
    Failed(String),
    /// The commit failed: the batch may or may not be stored.
    Ambiguous(String),
    /// The writer's lease of the game is gone (another node took it over):
    /// nothing of this write is stored, the rest of its batch is.
    Fenced,
    /// The writer has stopped (shutting down).
    Closed,
}

/// A refused write's cause: the constraint the database enforced.
#[derive(Debug)]
pub struct Constraint {
    message: String,
    unique: bool,
}

impl Constraint {
    pub fn is_unique_violation(&self) -> bool {
        self.unique
    }
}

impl std::fmt::Display for Constraint {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

impl WriteError {
    fn copy(&self) -> WriteError {
        match self {
            WriteError::Rejected(refusal) => WriteError::Rejected(Constraint {
                message: refusal.message.clone(),
                unique: refusal.unique,
            }),
            WriteError::Failed(cause) => WriteError::Failed(cause.clone()),
            WriteError::Ambiguous(cause) => WriteError::Ambiguous(cause.clone()),
            WriteError::Fenced => WriteError::Fenced,
            WriteError::Closed => WriteError::Closed,
        }
    }
}

pub struct Job {
    pub write: Write,
    pub done: oneshot::Sender<Result<(), WriteError>>,
}

enum Message {
    // Boxed: a job is a whole game row; the queue holds pointers.
    Job(Box<Job>),
    Stop(oneshot::Sender<()>),
}

/// Counters since start.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize)]
pub struct WriterStats {
    /// Transactions committed.
    pub batches: u64,
    /// Writes committed in them.
    pub writes: u64,
    /// Batches that failed (nothing stored) or whose commit was ambiguous.
    pub failed_batches: u64,
}

#[derive(Default)]
struct Counters {
    batches: AtomicU64,
    writes: AtomicU64,
    failed_batches: AtomicU64,
}

/// The handle to the writer task.
pub struct Writer {
    queue: mpsc::Sender<Message>,
    counters: Arc<Counters>,
}

impl Writer {
    pub fn start(pool: Pool, max_batch: usize) -> Writer {
        let (queue, inbox) = mpsc::channel(QUEUE);
        let counters = Arc::new(Counters::default());
        tokio::spawn(run(pool, inbox, max_batch, counters.clone()));
        Writer { queue, counters }
    }

    pub fn stats(&self) -> WriterStats {
        WriterStats {
            batches: self.counters.batches.load(Ordering::Relaxed),
            writes: self.counters.writes.load(Ordering::Relaxed),
            failed_batches: self.counters.failed_batches.load(Ordering::Relaxed),
        }
    }

    /// Queues `write` and waits until its batch is committed (or failed).
    pub async fn submit(&self, write: Write) -> Result<(), WriteError> {
        let (done, outcome) = oneshot::channel();
        self.queue
            .send(Message::Job(Box::new(Job { write, done })))
            .await
            .map_err(|_| WriteError::Closed)?;
        // A dropped reply means the writer task is gone.
        outcome.await.unwrap_or(Err(WriteError::Closed))
    }

    /// Queues `write` without waiting for room, returning where its outcome
    /// will arrive (tests fill one batch this way).
    #[cfg(test)]
    pub fn submit_now(&self, write: Write) -> oneshot::Receiver<Result<(), WriteError>> {
        let (done, outcome) = oneshot::channel();
        if let Err(
            mpsc::error::TrySendError::Full(Message::Job(job))
            | mpsc::error::TrySendError::Closed(Message::Job(job)),
        ) = self
            .queue
            .try_send(Message::Job(Box::new(Job { write, done })))
        {
            // The receiver is still ours to answer; nobody else has it.
            let _ = job.done.send(Err(WriteError::Closed));
        }
        outcome
    }

    /// Commits what is queued, stamps the heartbeat and stops the task.
    /// Later writes get [`WriteError::Closed`].
    pub async fn stop(&self) {
        let (done, stopped) = oneshot::channel();
        if self.queue.send(Message::Stop(done)).await.is_ok() {
            // The task answers after its last commit; if it died instead,
            // there is nothing left to wait for either way.
            let _ = stopped.await;
        }
    }
}

async fn run(
    pool: Pool,
    mut inbox: mpsc::Receiver<Message>,
    max_batch: usize,
    counters: Arc<Counters>,
) {
    let mut batch: Vec<Job> = Vec::with_capacity(max_batch.min(1024));
    loop {
        let first = match tokio::time::timeout(HEARTBEAT, inbox.recv()).await {
            Ok(Some(message)) => message,
            Ok(None) => break,
            Err(_idle) => {
                commit(&pool, &mut batch, &counters).await;
                continue;
            }
        };
        let mut stop = None;
        match first {
            Message::Job(job) => batch.push(*job),
            Message::Stop(done) => stop = Some(done),
        }
        while stop.is_none() && batch.len() < max_batch {
            match inbox.try_recv() {
                Ok(Message::Job(job)) => batch.push(*job),
                Ok(Message::Stop(done)) => stop = Some(done),
                Err(_) => break,
            }
        }
        commit(&pool, &mut batch, &counters).await;
        if let Some(done) = stop {
            inbox.close();
            // Whatever raced in before the close is answered, not dropped.
            while let Some(message) = inbox.recv().await {
                if let Message::Job(job) = message {
                    let _ = job.done.send(Err(WriteError::Closed));
                }
            }
            // The stopper may have given up waiting; nothing to do then.
            let _ = done.send(());
            break;
        }
    }
}

/// Commits `batch` (possibly empty: then only the heartbeat) and answers
/// every job in it.
async fn commit(pool: &Pool, batch: &mut Vec<Job>, counters: &Counters) {
    let started = std::time::Instant::now();
    let outcome = run_batch(pool, batch).await;
    metrics::histogram!("rookery_db_commit_seconds").record(started.elapsed().as_secs_f64());
    metrics::histogram!("rookery_db_batch_writes").record(batch.len() as f64);
    match outcome {
        Ok(results) => {
            // Per batch, so only at trace: a busy server commits hundreds a
            // second.
            tracing::trace!(writes = batch.len(), "batch committed");
            counters.batches.fetch_add(1, Ordering::Relaxed);
            let stored = results.iter().filter(|r| r.is_ok()).count();
            counters.writes.fetch_add(stored as u64, Ordering::Relaxed);
            for (job, result) in batch.drain(..).zip(results) {
                // The writer of a job may have gone (a closed request);
                // the write is stored all the same.
                let _ = job.done.send(result);
            }
        }
        Err(err) => {
            counters.failed_batches.fetch_add(1, Ordering::Relaxed);
            for job in batch.drain(..) {
                let _ = job.done.send(Err(err.copy()));
            }
        }
    }
}

/// Runs the batch in one transaction. `Ok` holds each job's own result once
/// the transaction is committed; `Err` is the failure of the whole batch.
///
/// Almost every write is accepted, so the batch is first run without a
/// savepoint per write: each savepoint is two more statements, and every
/// statement is a round trip to the database (for SQLite, to its
/// connection's own thread), which is most of a batch's time besides the
/// commit's fsync. Only if the database refuses a write is that attempt
/// rolled back and the batch run again with savepoints, so that the refused
/// write fails alone.
async fn run_batch(pool: &Pool, batch: &[Job]) -> Result<Vec<Result<(), WriteError>>, WriteError> {
    match run_transaction(pool, batch, Savepoints::OnRefusalRetry).await? {
        Attempt::Committed(results) => Ok(results),
        Attempt::Refused => match run_transaction(pool, batch, Savepoints::EachWrite).await? {
            Attempt::Committed(results) => Ok(results),
            // With savepoints a refusal is answered inside the transaction.
            Attempt::Refused => Err(WriteError::Failed(
                "a write was refused outside its savepoint".to_owned(),
            )),
        },
    }
}

/// Whether each write of a batch gets its own savepoint.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Savepoints {
    /// None: a refused write rolls back the whole attempt
    /// ([`Attempt::Refused`]), to be run again with savepoints.
    OnRefusalRetry,
    /// One per write: a refused write is rolled back alone.
    EachWrite,
}

enum Attempt {
    Committed(Vec<Result<(), WriteError>>),
    /// A write was refused without a savepoint: nothing is stored.
    Refused,
}

/// Why the statements of a transaction stopped.
enum Stop {
    Refused,
    Failed(sqlx::Error),
}

async fn run_transaction(
    pool: &Pool,
    batch: &[Job],
    savepoints: Savepoints,
) -> Result<Attempt, WriteError> {
    let dialect = pool.dialect();
    let failed = |err: sqlx::Error| WriteError::Failed(err.to_string());
    on_pool!(pool, pool => {
        let mut conn = pool.acquire().await.map_err(failed)?;
        sqlx::query(dialect.begin())
            .execute(&mut *conn)
            .await
            .map_err(failed)?;
        let mut results = Vec::with_capacity(batch.len());
        let body: Result<(), Stop> = async {
            for job in batch {
                // A fenced write is refused before any of its statements
                // runs: nothing of it to roll back.
                if let Some((game, fence)) = job.write.fence().filter(|_| !fencing_disabled()) {
                    if !fence.holds(game, Conn::from(&mut *conn)).await.map_err(Stop::Failed)? {
                        results.push(Err(WriteError::Fenced));
                        continue;
                    }
                }
                if savepoints == Savepoints::OnRefusalRetry {
                    match job.write.apply(Conn::from(&mut *conn)).await {
                        Ok(()) => results.push(Ok(())),
                        Err(err) if dialect.is_refusal(&err) => return Err(Stop::Refused),
                        Err(err) => return Err(Stop::Failed(err)),
                    }
                    continue;
                }
                sqlx::query("SAVEPOINT job").execute(&mut *conn).await.map_err(Stop::Failed)?;
                match job.write.apply(Conn::from(&mut *conn)).await {
                    Ok(()) => {
                        sqlx::query("RELEASE job").execute(&mut *conn).await.map_err(Stop::Failed)?;
                        results.push(Ok(()));
                    }
                    Err(err) if dialect.is_refusal(&err) => {
                        sqlx::query("ROLLBACK TO job").execute(&mut *conn).await.map_err(Stop::Failed)?;
                        sqlx::query("RELEASE job").execute(&mut *conn).await.map_err(Stop::Failed)?;
                        results.push(Err(refused(&err)));
                    }
                    Err(err) => return Err(Stop::Failed(err)),
                }
            }
            sqlx::query("UPDATE heartbeat SET alive_at = $1 WHERE id = 1")
                .bind(now_ms())
                .execute(&mut *conn)
                .await
                .map_err(Stop::Failed)?;
            Ok(())
        }
        .await;
        if let Err(stop) = body {
            // SQLite may have rolled back already (disk full does); a failed
            // ROLLBACK then changes nothing. If the connection is broken,
            // drop it so the pool opens a fresh one.
            if sqlx::query("ROLLBACK").execute(&mut *conn).await.is_err()
                && conn.ping().await.is_err()
            {
                conn.detach();
            }
            return match stop {
                Stop::Refused => Ok(Attempt::Refused),
                Stop::Failed(err) => Err(failed(err)),
            };
        }
        if let Err(err) = sqlx::query("COMMIT").execute(&mut *conn).await {
            // Leave no transaction open on the connection.
            if sqlx::query("ROLLBACK").execute(&mut *conn).await.is_err()
                && conn.ping().await.is_err()
            {
                conn.detach();
            }
            return Err(WriteError::Ambiguous(err.to_string()));
        }
        Ok(Attempt::Committed(results))
    })
}

/// The refusal of one write.
fn refused(err: &sqlx::Error) -> WriteError {
    let unique = matches!(err, sqlx::Error::Database(db) if db.is_unique_violation());
    WriteError::Rejected(Constraint {
        message: err.to_string(),
        unique,
    })
}

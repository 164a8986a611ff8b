//! AI searches on worker processes over NATS (issue 13).
//!
//! A node started with `--nats URL` sends each search to the workers
//! (`rookery-server --role worker --nats URL`, on any machine) instead of
//! running it on its own cores; adding workers adds AI capacity.
//!
//! The flow of one search:
//! 1. The node publishes a [`JobMessage`] on [`SEARCH_SUBJECT`], with the
//!    reply subject `rookery.ai.reply.NODE.JOB.ATTEMPT`. The workers
//!    subscribe in the queue group [`WORKER_QUEUE`], so NATS hands each job
//!    to one of them.
//! 2. The job carries the position, the history (for repetitions), the
//!    level, the clock budget and a deadline (`think_ms`: the level's
//!    longest think). The worker searches on a blocking thread, stops at
//!    the deadline, and publishes an [`AnswerMessage`] tagged with the
//!    job, the attempt and the ply.
//! 3. The node waits `think_ms` plus a grace (`--ai-job-grace-ms`). No
//!    answer by then (the worker died, hangs or is cut off): the job is
//!    published again as the next attempt, and NATS gives it to a worker
//!    still subscribed (a dead worker's subscription goes with its
//!    connection). After [`REMOTE_ATTEMPTS`] attempts the node searches
//!    itself.
//! 4. An answer is taken only for the attempt the node waits for, at the
//!    ply it asked about, with a move legal in the position; anything else
//!    (the late answer of an attempt given up, a forged or confused reply)
//!    is dropped and logged (`stale AI answer dropped`).
//!
//! Without workers (NATS answers "no responders" at once) or without a
//! NATS connection, the node searches locally, with at most `--ai-threads`
//! searches at once: the game never waits on a missing cluster.
//!
//! The answer goes back to the scheduler ([`crate::ai`]), which hands it to
//! the game exactly as a local search's: the game drops it, too, if its ply
//! is no longer current.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use futures_util::StreamExt;
use rookery_engine::ai::{choose_move, ClockBudget};
use rookery_engine::{CastlingMode, Move, Position};
use serde::{Deserialize, Serialize};
use tokio::sync::{oneshot, Semaphore};
use tokio::time::Instant;
use uuid::Uuid;

use crate::ai::{SearchRequest, SearchResult};

/// Where nodes publish search jobs.
pub const SEARCH_SUBJECT: &str = "rookery.ai.search";

/// The queue group of the workers: each job goes to one of them.
pub const WORKER_QUEUE: &str = "rookery-workers";

/// Attempts on workers before the node searches itself.
pub const REMOTE_ATTEMPTS: u32 = 3;

/// A search job, as published to the workers.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct JobMessage {
    pub job: u64,
    pub attempt: u32,
    pub ply: usize,
    pub fen: String,
    /// A Chess960 game (issue 40): the FEN is read, and castling answered,
    /// in Chess960's spelling (king takes rook). Absent from an older
    /// node's jobs: standard.
    #[serde(default)]
    pub chess960: bool,
    /// Hashes of the positions before this one, oldest first.
    pub history: Vec<u64>,
    pub level: u8,
    /// The AI's clock when the job was sent (timed games).
    pub clock: Option<ClockMessage>,
    /// The longest the worker may think, from when it receives the job; a
    /// job that waited longer than this on a busy worker is dropped.
    pub think_ms: u64,
}

#[derive(Debug, Clone, Copy, Serialize, Deserialize)]
pub struct ClockMessage {
    pub remaining_ms: u64,
    pub increment_ms: u64,
}

/// A worker's answer.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct AnswerMessage {
    pub job: u64,
    pub attempt: u32,
    pub ply: usize,
    /// Which worker searched (for logs).
    pub worker: String,
    /// The move in UCI, or `None` when the search found none.
    pub uci: Option<String>,
    /// Why the search failed, if it did.
    pub error: Option<String>,
}

/// Why a job could not be done by a worker: the node searches itself.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Unavailable {
    #[error("no worker is subscribed")]
    NoWorkers,
    #[error("no worker answered {0} attempts in time")]
    TimedOut(u32),
    #[error("NATS: {0}")]
    Nats(String),
}

/// The attempt a node waits for, per job.
struct Pending {
    attempt: u32,
    ply: usize,
    done: oneshot::Sender<Reply>,
}

enum Reply {
    Answer(AnswerMessage),
    NoResponders,
}

/// A node's side: sends jobs, routes the answers.
pub struct RemoteSearch {
    client: async_nats::Client,
    node: String,
    grace: Duration,
    pending: Arc<Mutex<HashMap<u64, Pending>>>,
}

impl std::fmt::Debug for RemoteSearch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RemoteSearch")
            .field("node", &self.node)
            .finish_non_exhaustive()
    }
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    // Every change under these locks is one insert or remove.
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

/// How long a job at `level` may think: the level's longest think.
fn think_time(level: u8) -> Duration {
    Duration::from_millis(rookery_engine::level::level(level).map_or(1_000, |l| l.max_think_ms))
}

impl RemoteSearch {
    /// Connects to NATS at `url` and listens for this node's answers. The
    /// connection reconnects by itself after a broker outage; meanwhile
    /// jobs fall back to local search.
    pub async fn connect(url: &str, grace: Duration) -> anyhow::Result<RemoteSearch> {
        let client = connect_nats(url, "rookery-node").await?;
        let node = Uuid::new_v4().simple().to_string();
        let mut answers = client
            .subscribe(format!("rookery.ai.reply.{node}.>"))
            .await
            .map_err(|err| anyhow::anyhow!("subscribing to NATS: {err}"))?;
        let pending: Arc<Mutex<HashMap<u64, Pending>>> = Arc::default();
        let routes = pending.clone();
        tokio::spawn(async move {
            while let Some(message) = answers.next().await {
                route(&routes, message);
            }
        });
        tracing::info!(%node, "AI searches go to NATS workers");
        Ok(RemoteSearch {
            client,
            node,
            grace,
            pending,
        })
    }

    /// Has a worker search `request` (job `job` of the scheduler), trying
    /// again on timeouts. `Err` means the node must search itself. Returns
    /// early (with no move) if `stop` is raised: the game no longer wants
    /// the answer.
    pub async fn search(
        &self,
        job: u64,
        request: &SearchRequest,
        stop: &AtomicBool,
    ) -> Result<SearchResult, Unavailable> {
        if self.client.connection_state() != async_nats::connection::State::Connected {
            return Err(Unavailable::Nats("not connected".into()));
        }
        let think = think_time(request.level);
        for attempt in 1..=REMOTE_ATTEMPTS {
            let (done, answer) = oneshot::channel();
            lock(&self.pending).insert(
                job,
                Pending {
                    attempt,
                    ply: request.ply,
                    done,
                },
            );
            let message = JobMessage {
                job,
                attempt,
                ply: request.ply,
                fen: request.position.to_fen(),
                chess960: request.position.is_chess960(),
                history: request.history.clone(),
                level: request.level,
                clock: request.clock.map(|clock| {
                    let budget = clock.budget_at(Instant::now());
                    ClockMessage {
                        remaining_ms: millis(budget.remaining),
                        increment_ms: millis(budget.increment),
                    }
                }),
                think_ms: millis(think),
            };
            let outcome = self.attempt(&message, answer, think, stop).await;
            lock(&self.pending).remove(&job);
            match outcome {
                Attempt::Answered(answer) => return Ok(read_answer(request, answer)),
                Attempt::Stopped => return Ok(Ok(None)),
                Attempt::NoResponders => return Err(Unavailable::NoWorkers),
                Attempt::Failed(err) => return Err(Unavailable::Nats(err)),
                Attempt::TimedOut => {
                    tracing::warn!(
                        job,
                        attempt,
                        ply = request.ply,
                        "no AI answer in time: trying again"
                    );
                }
            }
        }
        Err(Unavailable::TimedOut(REMOTE_ATTEMPTS))
    }

    async fn attempt(
        &self,
        message: &JobMessage,
        answer: oneshot::Receiver<Reply>,
        think: Duration,
        stop: &AtomicBool,
    ) -> Attempt {
        let reply = format!(
            "rookery.ai.reply.{}.{}.{}",
            self.node, message.job, message.attempt
        );
        let payload = match serde_json::to_vec(message) {
            Ok(payload) => payload,
            Err(err) => return Attempt::Failed(err.to_string()),
        };
        if let Err(err) = self
            .client
            .publish_with_reply(SEARCH_SUBJECT, reply, payload.into())
            .await
        {
            return Attempt::Failed(err.to_string());
        }
        let deadline = Instant::now() + think + self.grace;
        let mut answer = std::pin::pin!(answer);
        loop {
            // The stop flag is polled: a game that moved on stops waiting.
            let tick = tokio::time::sleep(Duration::from_millis(25));
            tokio::select! {
                reply = &mut answer => {
                    return match reply {
                        Ok(Reply::Answer(answer)) => Attempt::Answered(answer),
                        Ok(Reply::NoResponders) => Attempt::NoResponders,
                        Err(_) => Attempt::Failed("the answer router stopped".into()),
                    };
                }
                () = tick => {
                    if stop.load(Ordering::Acquire) {
                        return Attempt::Stopped;
                    }
                    if Instant::now() >= deadline {
                        return Attempt::TimedOut;
                    }
                }
            }
        }
    }
}

enum Attempt {
    Answered(AnswerMessage),
    Stopped,
    NoResponders,
    TimedOut,
    Failed(String),
}

fn millis(duration: Duration) -> u64 {
    u64::try_from(duration.as_millis()).unwrap_or(u64::MAX)
}

/// Hands an incoming message on `rookery.ai.reply.NODE.JOB.ATTEMPT` to the
/// job waiting for exactly that attempt and ply; drops anything else.
fn route(pending: &Mutex<HashMap<u64, Pending>>, message: async_nats::Message) {
    let mut parts = message.subject.rsplit('.');
    let attempt = parts.next().and_then(|p| p.parse::<u32>().ok());
    let job = parts.next().and_then(|p| p.parse::<u64>().ok());
    let (Some(job), Some(attempt)) = (job, attempt) else {
        tracing::warn!(subject = %message.subject, "stale AI answer dropped: not a job's reply subject");
        return;
    };
    let reply = if message.status == Some(async_nats::StatusCode::NO_RESPONDERS) {
        Reply::NoResponders
    } else {
        match serde_json::from_slice::<AnswerMessage>(&message.payload) {
            Ok(answer) => Reply::Answer(answer),
            Err(err) => {
                tracing::warn!(job, attempt, %err, "stale AI answer dropped: unreadable");
                return;
            }
        }
    };
    let mut pending = lock(pending);
    let current = pending
        .get(&job)
        .map(|waiting| (waiting.attempt, waiting.ply));
    let fits = match (&reply, current) {
        (_, None) => false,
        (Reply::NoResponders, Some((expected, _))) => attempt == expected,
        (Reply::Answer(answer), Some((expected, ply))) => {
            attempt == expected
                && answer.job == job
                && answer.attempt == expected
                && answer.ply == ply
        }
    };
    if !fits {
        if let Reply::Answer(answer) = &reply {
            tracing::warn!(
                job,
                attempt = answer.attempt,
                ply = answer.ply,
                worker = %answer.worker,
                waiting_for = ?current,
                "stale AI answer dropped"
            );
        }
        return;
    }
    if let Some(waiting) = pending.remove(&job) {
        // The waiter may have given up this instant; nothing to do then.
        let _ = waiting.done.send(reply);
    }
}

/// A worker's answer as a search result: its move must be legal here.
fn read_answer(request: &SearchRequest, answer: AnswerMessage) -> SearchResult {
    if let Some(error) = answer.error {
        return Err(format!("worker {}: {error}", answer.worker));
    }
    let Some(uci) = answer.uci else {
        return Ok(None);
    };
    let mv: Move = request
        .position
        .parse_uci(&uci)
        .ok()
        .filter(|mv| request.position.is_legal(*mv))
        .ok_or_else(|| format!("worker {} answered an illegal move {uci}", answer.worker))?;
    tracing::debug!(ply = request.ply, %uci, worker = %answer.worker, "AI answer from a worker");
    Ok(Some(mv))
}

/// A NATS connection to `url` named `name` (a node, a worker, a cluster
/// member), retrying until the broker first answers; it reconnects by
/// itself after an outage.
pub async fn connect_nats(url: &str, name: &str) -> anyhow::Result<async_nats::Client> {
    async_nats::ConnectOptions::new()
        .name(name)
        .retry_on_initial_connect()
        .connect(url)
        .await
        .map_err(|err| anyhow::anyhow!("connecting to NATS at {url}: {err}"))
}

// ------------------------------------------------------------------ worker

/// Runs a worker: takes jobs from the queue group until `shutdown`, at most
/// `threads` searches at once (more jobs wait in this process). Prints
/// `worker ID ready` on stdout once subscribed.
pub async fn run_worker(
    url: &str,
    threads: usize,
    shutdown: impl std::future::Future<Output = ()>,
) -> anyhow::Result<()> {
    let worker = Uuid::new_v4().simple().to_string();
    let client = connect_nats(url, "rookery-worker").await?;
    let mut jobs = client
        .queue_subscribe(SEARCH_SUBJECT, WORKER_QUEUE.into())
        .await
        .map_err(|err| anyhow::anyhow!("subscribing to NATS: {err}"))?;
    client
        .flush()
        .await
        .map_err(|err| anyhow::anyhow!("NATS: {err}"))?;
    {
        use std::io::Write;
        let mut stdout = std::io::stdout();
        writeln!(stdout, "worker {worker} ready")?;
        stdout.flush()?;
    }
    tracing::info!(%worker, threads, "worker ready");
    let slots = Arc::new(Semaphore::new(threads.max(1)));
    let mut shutdown = std::pin::pin!(shutdown);
    loop {
        tokio::select! {
            message = jobs.next() => {
                let Some(message) = message else { break };
                tokio::spawn(serve_job(client.clone(), message, slots.clone(), worker.clone()));
            }
            () = &mut shutdown => break,
        }
    }
    // No new jobs; the ones taken are answered.
    let _ = jobs.unsubscribe().await;
    let _ = slots.acquire_many(threads.max(1) as u32).await;
    let _ = client.flush().await;
    tracing::info!(%worker, "worker stopped");
    Ok(())
}

async fn serve_job(
    client: async_nats::Client,
    message: async_nats::Message,
    slots: Arc<Semaphore>,
    worker: String,
) {
    let received = Instant::now();
    let Some(reply) = message.reply.clone() else {
        tracing::warn!("a job without a reply subject: ignored");
        return;
    };
    let job: JobMessage = match serde_json::from_slice(&message.payload) {
        Ok(job) => job,
        Err(err) => {
            tracing::warn!(%err, "an unreadable job: ignored");
            return;
        }
    };
    let Ok(_slot) = slots.acquire_owned().await else {
        return;
    };
    let think = Duration::from_millis(job.think_ms);
    let Some(left) = think.checked_sub(received.elapsed()) else {
        tracing::warn!(
            job = job.job,
            attempt = job.attempt,
            "job expired before it started: dropped"
        );
        return;
    };
    tracing::info!(
        job = job.job,
        attempt = job.attempt,
        ply = job.ply,
        level = job.level,
        %worker,
        "job received"
    );
    let stop = Arc::new(AtomicBool::new(false));
    let timer = {
        let stop = stop.clone();
        tokio::spawn(async move {
            tokio::time::sleep(left).await;
            stop.store(true, Ordering::Release);
        })
    };
    let searched = {
        let job = job.clone();
        tokio::task::spawn_blocking(move || search_job(&job, &stop)).await
    };
    timer.abort();
    let (uci, error) = match searched {
        Ok(Ok(uci)) => (uci, None),
        Ok(Err(err)) => (None, Some(err)),
        Err(err) => (None, Some(format!("the search panicked: {err}"))),
    };
    tracing::info!(
        job = job.job,
        attempt = job.attempt,
        ply = job.ply,
        uci = %uci.as_deref().unwrap_or("-"),
        %worker,
        "job answered"
    );
    let answer = AnswerMessage {
        job: job.job,
        attempt: job.attempt,
        ply: job.ply,
        worker,
        uci,
        error,
    };
    match serde_json::to_vec(&answer) {
        Ok(payload) => {
            if let Err(err) = client.publish(reply, payload.into()).await {
                tracing::warn!(%err, "cannot publish an answer");
            }
            let _ = client.flush().await;
        }
        Err(err) => tracing::error!(%err, "cannot encode an answer"),
    }
}

/// The engine's search for a job (blocking): its move in UCI, spelled in
/// the job's castling mode.
fn search_job(job: &JobMessage, stop: &AtomicBool) -> Result<Option<String>, String> {
    let mode = if job.chess960 {
        CastlingMode::Chess960
    } else {
        CastlingMode::Standard
    };
    let position = Position::from_fen(&job.fen)
        .map_err(|err| format!("bad FEN: {err}"))?
        .with_castling_mode(mode);
    let level = rookery_engine::level::level(job.level)
        .ok_or_else(|| format!("no AI level {}", job.level))?;
    let clock = job.clock.map(|clock| ClockBudget {
        remaining: Duration::from_millis(clock.remaining_ms),
        increment: Duration::from_millis(clock.increment_ms),
    });
    Ok(choose_move(&position, &job.history, level, clock, stop).map(|mv| position.uci(mv)))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn job(fen: &str, chess960: bool) -> JobMessage {
        JobMessage {
            job: 1,
            attempt: 1,
            ply: 0,
            fen: fen.into(),
            chess960,
            history: Vec::new(),
            level: 8,
            clock: None,
            think_ms: 1_000,
        }
    }

    /// A worker answers a Chess960 job in Chess960's spelling: here the
    /// long castle mates, and its king's two squares (b1c1) would be read
    /// back as a king step.
    #[test]
    fn a_chess960_job_is_answered_king_takes_rook() {
        let fen = "2rkr3/2p1p3/8/1B6/8/8/8/RK6 w Q - 0 1";
        let stop = AtomicBool::new(false);
        let answer = search_job(&job(fen, true), &stop).unwrap();
        assert_eq!(answer.as_deref(), Some("b1a1"));
        // An older node's job (no `chess960` field) reads as standard.
        let old = r#"{"job":1,"attempt":1,"ply":0,"fen":"8/8/8/8/8/8/8/K6k w - - 0 1",
            "history":[],"level":1,"clock":null,"think_ms":100}"#;
        let parsed: JobMessage = serde_json::from_str(old).unwrap();
        assert!(!parsed.chess960);
    }
}

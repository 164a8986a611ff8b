//! The AI scheduler: runs the engine's searches for computer seats, fairly.
//!
//! A search is CPU-bound for up to seconds, so it never runs on the async
//! runtime, nor on tokio's blocking pool: the scheduler owns a small pool of
//! dedicated search threads (`--ai-threads`, one per core by default; more
//! would only slice the same cores thinner and make every AI slower). Each
//! search thread lowers its own OS priority at start ([`SearchPriority`]:
//! a nice value, `--ai-nice`, 10 by default, or Linux's `SCHED_IDLE`
//! policy, `--ai-idle`; both are per thread on Linux), so that when the
//! searches keep every core busy the runtime's threads, which carry every
//! WebSocket and HTTP request, still get a core as soon as they wake up.
//! Waiting searches sit in a queue that costs no thread.
//!
//! Fairness: the queue has two classes. A search for a game with a human
//! seat (someone is waiting for that answer) always goes before a search
//! for an AI v AI game (a show that can wait). AI v AI searches run first
//! come, first served; human games' searches take turns by client (the
//! game creator's address): the client with the fewest searches running
//! goes next. And when a human's search arrives while every thread is
//! busy, one running AI v AI search is *preempted*: its stop flag is raised,
//! its half-done answer is thrown away and it goes back to the front of its
//! class's queue; failing that, a client holding two or more threads gives
//! one up the same way to a client holding none. So a human's opponent
//! starts thinking at once whatever AI v AI games, or one client's many
//! games, run, and answers within its level's think time (plus the time
//! other clients' searches take, when there are more of them than threads).
//!
//! Post-game analysis borrows the same slots through a third, lowest
//! class ([`AiScheduler::lease`]): it gets a slot only when no game's
//! search waits, and any game's search arriving while every slot is taken
//! preempts it first (see [`Priority::Analysis`]).
//!
//! Clocks: a timed AI's budget is computed when its search *starts*
//! running, from a snapshot of its clock and the instant the snapshot was
//! taken, because its clock keeps running while it waits. A search that
//! waited therefore plans with the time it really has left and does not
//! lose on time because of the queue.
//!
//! Failures: a search that panics or finds no move (there is always one, or
//! the game would be over) is retried [`RETRIES`] times, then its game gets
//! an [`AiAnswer`] whose outcome is an error; the game ends it (aborted)
//! instead of waiting forever.
//!
//! Workers: with `--nats`, a search is sent to the worker processes
//! instead ([`crate::ai::remote`]); then `--ai-remote-slots` search threads
//! mostly wait on NATS, and a search falls back to this node's cores (still
//! at most `--ai-threads` at once) when no worker can do it.
//!
//! Every search carries a stop flag (raised when its game no longer wants
//! it: the game ended, moved on, or the server is shutting down) and the ply
//! it was started for: the live game drops an answer whose ply is no longer
//! current.

pub mod analysis;
pub mod remote;

use std::collections::{HashMap, VecDeque};
use std::net::IpAddr;
use std::panic::AssertUnwindSafe;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use rookery_engine::ai::{choose_move, ClockBudget};
use rookery_engine::{Move, Position};
use tokio::sync::{mpsc, oneshot};
use tokio::time::Instant;
use uuid::Uuid;

use crate::ai::remote::RemoteSearch;
use crate::http::error::ApiError;

/// How many times a failed search is tried again before its game is told.
pub const RETRIES: u32 = 2;

/// What a search found, for the ply it was started at.
#[derive(Debug)]
pub struct AiAnswer {
    pub ply: usize,
    /// The hash of the position searched (a takeback can bring the same ply
    /// back with another position).
    pub position: u64,
    /// The move, or why none could be found after every retry.
    pub outcome: Result<Move, SearchFailed>,
}

/// A search failed (panicked, or found no move) on every try.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("the AI's search failed {attempts} times: {last_error}")]
pub struct SearchFailed {
    pub attempts: u32,
    pub last_error: String,
}

/// Which queue a search waits in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Priority {
    /// A game with a human seat: someone waits for this answer.
    Human,
    /// An AI v AI game.
    Background,
    /// Post-game analysis ([`AiScheduler::lease`]): runs only when no
    /// game's search waits, and is the first to be preempted.
    Analysis,
}

/// A timed AI's clock as it was when its search was asked for.
#[derive(Debug, Clone, Copy)]
pub struct ClockSnapshot {
    pub remaining: Duration,
    pub increment: Duration,
    /// When `remaining` was read: the clock has been running since.
    pub taken_at: Instant,
}

impl ClockSnapshot {
    /// The budget for a search starting at `now`.
    pub fn budget_at(&self, now: Instant) -> ClockBudget {
        ClockBudget {
            remaining: self
                .remaining
                .saturating_sub(now.saturating_duration_since(self.taken_at)),
            increment: self.increment,
        }
    }
}

/// What a search needs, copied out of the game.
#[derive(Debug, Clone)]
pub struct SearchRequest {
    pub ply: usize,
    pub position: Position,
    /// Hashes of the positions before the current one, oldest first.
    pub history: Vec<u64>,
    pub level: u8,
    pub clock: Option<ClockSnapshot>,
    pub priority: Priority,
    /// The client whose game this is ([`crate::live::LiveGame::client`]):
    /// human searches of different clients are served in turn.
    pub client: Option<IpAddr>,
}

/// The search itself: the request, the clock budget at start, and the flag
/// that stops it. `Ok(None)` is "no move found". The engine's in
/// production; tests inject failing ones.
pub type SearchFn =
    Arc<dyn Fn(&SearchRequest, Option<ClockBudget>, &AtomicBool) -> SearchResult + Send + Sync>;

pub type SearchResult = Result<Option<Move>, String>;

/// The engine's search at the request's level.
fn engine_search(
    request: &SearchRequest,
    budget: Option<ClockBudget>,
    stop: &AtomicBool,
) -> SearchResult {
    let level = rookery_engine::level::level(request.level)
        .ok_or_else(|| format!("no AI level {}", request.level))?;
    Ok(choose_move(
        &request.position,
        &request.history,
        level,
        budget,
        stop,
    ))
}

/// The flags shared by a search, its game and the scheduler.
#[derive(Debug, Default)]
struct Control {
    /// The game no longer wants this search.
    cancelled: AtomicBool,
    /// What the running search polls: raised to cancel or to preempt it.
    interrupt: AtomicBool,
    /// Interrupted to make room for a human's search (not cancelled).
    preempted: AtomicBool,
}

impl Control {
    fn is_cancelled(&self) -> bool {
        self.cancelled.load(Ordering::Acquire)
    }
}

/// A search asked for, as its game sees it.
#[derive(Debug)]
pub struct Thinking {
    pub ply: usize,
    control: Arc<Control>,
}

impl Thinking {
    /// Asks the search to stop (or never start); its answer, if any, is
    /// not sent.
    pub fn stop(&self) {
        self.control.cancelled.store(true, Ordering::Release);
        self.control.interrupt.store(true, Ordering::Release);
    }
}

impl Drop for Thinking {
    fn drop(&mut self) {
        self.stop();
    }
}

struct Job {
    id: u64,
    request: Arc<SearchRequest>,
    control: Arc<Control>,
    answers: mpsc::Sender<AiAnswer>,
    /// Failed tries so far.
    failures: u32,
    /// When it was queued (the wait metric).
    queued_at: Instant,
}

struct Running {
    id: u64,
    priority: Priority,
    client: Option<IpAddr>,
    control: Arc<Control>,
}

#[derive(Default)]
struct Queues {
    human: VecDeque<Job>,
    background: VecDeque<Job>,
    /// Analysis leases waiting for a slot (lowest class).
    leases: VecDeque<LeaseWaiter>,
    running: Vec<Running>,
    next_id: u64,
    /// The scheduler is gone: search threads exit when they see it.
    closed: bool,
}

impl Queues {
    fn queue(&mut self, priority: Priority) -> &mut VecDeque<Job> {
        match priority {
            Priority::Human => &mut self.human,
            // Analysis never queues a `Job` (it waits as a lease).
            Priority::Background | Priority::Analysis => &mut self.background,
        }
    }

    /// The next job to run that its game still wants (dropping the others):
    /// a human search first, from the client with the fewest human
    /// searches running (first come, first served among equals), so one
    /// client's many games cannot keep everyone else's opponents waiting.
    fn pop_next(&mut self) -> Option<Job> {
        self.human.retain(|job| !job.control.is_cancelled());
        let running = self.human_searches_by_client();
        let fairest = self
            .human
            .iter()
            .enumerate()
            .min_by_key(|(index, job)| {
                let client = job.request.client;
                (running.get(&client).copied().unwrap_or(0), *index)
            })
            .map(|(index, _)| index);
        if let Some(job) = fairest.and_then(|index| self.human.remove(index)) {
            return Some(job);
        }
        while let Some(job) = self.background.pop_front() {
            if !job.control.is_cancelled() {
                return Some(job);
            }
        }
        None
    }

    /// Human searches running and not being preempted, per client.
    fn human_searches_by_client(&self) -> HashMap<Option<IpAddr>, usize> {
        let mut counts = HashMap::new();
        for running in &self.running {
            if running.priority == Priority::Human
                && !running.control.preempted.load(Ordering::Acquire)
            {
                *counts.entry(running.client).or_insert(0) += 1;
            }
        }
        counts
    }
}

/// What the search threads share with the scheduler's handles.
struct Inner {
    threads: usize,
    search: SearchFn,
    queues: Mutex<Queues>,
    /// Signalled when a job is queued (or the scheduler closes).
    work: Condvar,
    /// The workers, when searches go to them (with the runtime their
    /// client runs on); then `local` bounds the searches that fall back to
    /// this node.
    remote: Option<(Arc<RemoteSearch>, tokio::runtime::Handle)>,
    local: Arc<tokio::sync::Semaphore>,
}

/// The search threads' owner: when the last [`AiScheduler`] clone goes,
/// the threads are told to exit (each after the search it is running).
struct Pool {
    inner: Arc<Inner>,
}

impl Drop for Pool {
    fn drop(&mut self) {
        let mut queues = self.inner.lock();
        queues.closed = true;
        // Nobody is left to want the queued searches' answers.
        queues.human.clear();
        queues.background.clear();
        queues.leases.clear();
        for running in &queues.running {
            running.control.interrupt.store(true, Ordering::Release);
        }
        drop(queues);
        self.inner.work.notify_all();
    }
}

/// The nice value search threads run at unless told otherwise
/// (`--ai-nice`): low enough that the runtime's threads win a core at
/// once, not so low that an AI crawls when the machine is busy elsewhere.
pub const DEFAULT_NICE: i32 = 10;

/// How a search thread gives way to the threads serving requests and
/// sockets when both want a core.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SearchPriority {
    /// A nice value, 0 (no change) to 19 (lowest). A waking runtime thread
    /// outweighs the search, but the kernel may let the search finish its
    /// time slice first.
    Nice(i32),
    /// Linux's `SCHED_IDLE` policy: the search runs on what nothing else
    /// wants, and any other thread that wakes takes its core at once.
    Idle,
}

impl Default for SearchPriority {
    fn default() -> SearchPriority {
        SearchPriority::Nice(DEFAULT_NICE)
    }
}

/// A snapshot of the scheduler, for operators (`GET /api/admin/stats`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub struct AiStats {
    /// Searches that may run at once (`--ai-threads`, or worker slots).
    pub threads: usize,
    /// Game searches running.
    pub running: usize,
    /// Searches for games with a human seat waiting for a thread.
    pub waiting_human: usize,
    /// Searches for AI v AI games waiting for a thread.
    pub waiting_ai_v_ai: usize,
    /// Post-game analyses holding a slot.
    pub analyses: usize,
}

#[derive(Clone)]
pub struct AiScheduler {
    pool: Arc<Pool>,
    /// Minimum time between two moves of an AI v AI game.
    pub ai_move_delay: Duration,
}

impl std::fmt::Debug for AiScheduler {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AiScheduler")
            .field("threads", &self.pool.inner.threads)
            .field("ai_move_delay", &self.ai_move_delay)
            .finish()
    }
}

impl AiScheduler {
    pub fn new(threads: usize, ai_move_delay: Duration) -> AiScheduler {
        AiScheduler::with_priority(threads, SearchPriority::default(), ai_move_delay)
    }

    /// The engine's searches on `threads` threads running at `priority`.
    pub fn with_priority(
        threads: usize,
        priority: SearchPriority,
        ai_move_delay: Duration,
    ) -> AiScheduler {
        AiScheduler::configured(threads, priority, ai_move_delay, Arc::new(engine_search))
    }

    /// A scheduler running `search` instead of the engine's (for tests).
    pub fn with_search(threads: usize, ai_move_delay: Duration, search: SearchFn) -> AiScheduler {
        AiScheduler::configured(threads, SearchPriority::default(), ai_move_delay, search)
    }

    /// Starts `threads` search threads (at least one) named `ai-search-N`,
    /// each lowering its own priority to `priority` (a nice value is
    /// clamped to 0..=19: a search is never given more priority than the
    /// runtime).
    pub fn configured(
        threads: usize,
        priority: SearchPriority,
        ai_move_delay: Duration,
        search: SearchFn,
    ) -> AiScheduler {
        AiScheduler::launch(
            Inner {
                threads: threads.max(1),
                search,
                queues: Mutex::new(Queues::default()),
                work: Condvar::new(),
                remote: None,
                local: Arc::new(tokio::sync::Semaphore::new(threads.max(1))),
            },
            priority,
            ai_move_delay,
        )
    }

    /// A scheduler that sends searches to the workers behind `remote`, up
    /// to `slots` at once, and runs at most `threads` on this node when
    /// they cannot take one. Must be called inside the tokio runtime.
    pub fn with_workers(
        threads: usize,
        slots: usize,
        priority: SearchPriority,
        ai_move_delay: Duration,
        remote: RemoteSearch,
    ) -> AiScheduler {
        AiScheduler::launch(
            Inner {
                threads: slots.max(1),
                search: Arc::new(engine_search),
                queues: Mutex::new(Queues::default()),
                work: Condvar::new(),
                remote: Some((Arc::new(remote), tokio::runtime::Handle::current())),
                local: Arc::new(tokio::sync::Semaphore::new(threads.max(1))),
            },
            priority,
            ai_move_delay,
        )
    }

    fn launch(inner: Inner, priority: SearchPriority, ai_move_delay: Duration) -> AiScheduler {
        let inner = Arc::new(inner);
        for index in 0..inner.threads {
            let worker = inner.clone();
            // Like `std::thread::spawn`, failing to start a thread (the
            // process is out of threads or memory) is fatal: it happens
            // once, at start, before anything is served.
            std::thread::Builder::new()
                .name(format!("ai-search-{index}"))
                .spawn(move || {
                    lower_priority(priority);
                    worker.serve();
                })
                .expect("the OS starts an AI search thread");
        }
        AiScheduler {
            pool: Arc::new(Pool { inner }),
            ai_move_delay,
        }
    }

    /// What the search threads are doing now.
    pub fn stats(&self) -> AiStats {
        let inner = &self.pool.inner;
        let queues = inner.lock();
        let waiting = |queue: &VecDeque<Job>| {
            queue
                .iter()
                .filter(|job| !job.control.is_cancelled())
                .count()
        };
        AiStats {
            threads: inner.threads,
            running: queues
                .running
                .iter()
                .filter(|running| running.priority != Priority::Analysis)
                .count(),
            waiting_human: waiting(&queues.human),
            waiting_ai_v_ai: waiting(&queues.background),
            analyses: queues
                .running
                .iter()
                .filter(|running| running.priority == Priority::Analysis)
                .count(),
        }
    }

    /// Asks for a search; its answer arrives on `answers`.
    pub fn start(&self, request: SearchRequest, answers: mpsc::Sender<AiAnswer>) -> Thinking {
        let inner = &self.pool.inner;
        let control = Arc::new(Control::default());
        let thinking = Thinking {
            ply: request.ply,
            control: control.clone(),
        };
        let priority = request.priority;
        let mut queues = inner.lock();
        let id = queues.next_id;
        queues.next_id += 1;
        queues.queue(priority).push_back(Job {
            id,
            request: Arc::new(request),
            control,
            answers,
            failures: 0,
            queued_at: Instant::now(),
        });
        if priority == Priority::Human {
            inner.preempt_for_human(&mut queues);
        }
        inner.preempt_analysis(&mut queues);
        drop(queues);
        inner.work.notify_one();
        thinking
    }
}

/// Lowers the calling thread's scheduling priority. On Linux nice and the
/// scheduling policy belong to one thread (the kernel schedules threads as
/// tasks): `setpriority(PRIO_PROCESS, tid)` and `sched_setscheduler(0)`
/// change only the caller. Lowering either needs no privilege; a failure is
/// logged and the thread searches at the priority it has.
#[cfg(target_os = "linux")]
fn lower_priority(priority: SearchPriority) {
    // SAFETY: gettid, setpriority and sched_setscheduler take plain
    // integers and a pointer to a parameter that lives across the call.
    let status = unsafe {
        match priority {
            SearchPriority::Nice(nice) => {
                let tid = libc::syscall(libc::SYS_gettid) as libc::id_t;
                libc::setpriority(libc::PRIO_PROCESS, tid, nice.clamp(0, 19))
            }
            SearchPriority::Idle => {
                let param = libc::sched_param { sched_priority: 0 };
                libc::sched_setscheduler(0, libc::SCHED_IDLE, &param)
            }
        }
    };
    if status != 0 {
        let error = std::io::Error::last_os_error();
        tracing::warn!(%error, ?priority, "could not lower an AI search thread's priority");
    }
}

#[cfg(not(target_os = "linux"))]
fn lower_priority(priority: SearchPriority) {
    tracing::debug!(?priority, "search threads' priority is only set on Linux");
}

impl Inner {
    fn lock(&self) -> MutexGuard<'_, Queues> {
        // Every change under this lock is a push, a pop or a flag: a panic
        // elsewhere cannot leave it half-done, so a poisoned lock is fine.
        self.queues.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Makes room for a waiting human search: when every thread is busy and
    /// there are more human searches waiting than running AI v AI searches
    /// already being preempted, interrupts one more AI v AI search.
    fn preempt_for_human(&self, queues: &mut Queues) {
        // Analysis leases do not hold a search thread (they are preempted
        // by `preempt_analysis`).
        let searching = queues
            .running
            .iter()
            .filter(|running| running.priority != Priority::Analysis)
            .count();
        if searching < self.threads {
            return;
        }
        let waiting = queues
            .human
            .iter()
            .filter(|job| !job.control.is_cancelled())
            .count();
        let (yielding, mut candidates): (Vec<_>, Vec<_>) = queues
            .running
            .iter()
            .filter(|running| running.priority == Priority::Background)
            .partition(|running| running.control.preempted.load(Ordering::Acquire));
        for running in candidates
            .drain(..)
            .take(waiting.saturating_sub(yielding.len()))
        {
            running.control.preempted.store(true, Ordering::Release);
            running.control.interrupt.store(true, Ordering::Release);
            tracing::debug!(search = running.id, "AI v AI search preempted");
        }
        self.preempt_for_other_clients(queues);
    }

    /// When every thread is busy and a client with no human search running
    /// waits while another client has several running, one of the busy
    /// client's searches yields (it runs again first among that client's
    /// own): each client gets a thread before any client gets a second.
    fn preempt_for_other_clients(&self, queues: &mut Queues) {
        let mut running = queues.human_searches_by_client();
        let yielding = queues
            .running
            .iter()
            .filter(|running| running.control.preempted.load(Ordering::Acquire))
            .count();
        let mut starved: Vec<Option<IpAddr>> = Vec::new();
        for job in &queues.human {
            let client = job.request.client;
            if !job.control.is_cancelled()
                && !running.contains_key(&client)
                && !starved.contains(&client)
            {
                starved.push(client);
            }
        }
        for _ in 0..starved.len().saturating_sub(yielding) {
            // The client holding the most threads gives one up, if it
            // holds more than one.
            let Some((&busiest, &count)) = running.iter().max_by_key(|(_, count)| **count) else {
                return;
            };
            if count < 2 {
                return;
            }
            let Some(victim) = queues.running.iter().rev().find(|running| {
                running.priority == Priority::Human
                    && running.client == busiest
                    && !running.control.preempted.load(Ordering::Acquire)
            }) else {
                return;
            };
            victim.control.preempted.store(true, Ordering::Release);
            victim.control.interrupt.store(true, Ordering::Release);
            tracing::debug!(search = victim.id, "search preempted for another client's");
            running.insert(busiest, count - 1);
        }
    }

    /// The next job for a free search thread, waiting for one; `None` when
    /// the scheduler is gone.
    fn next_job(&self) -> Option<Job> {
        let mut queues = self.lock();
        loop {
            if queues.closed {
                return None;
            }
            if let Some(job) = queues.pop_next() {
                queues.running.push(Running {
                    id: job.id,
                    priority: job.request.priority,
                    client: job.request.client,
                    control: job.control.clone(),
                });
                return Some(job);
            }
            queues = self
                .work
                .wait(queues)
                .unwrap_or_else(PoisonError::into_inner);
        }
    }

    /// Runs `job`'s search on this thread, catching a panic.
    fn search_here(&self, job: &Job) -> std::thread::Result<SearchResult> {
        std::panic::catch_unwind(AssertUnwindSafe(|| {
            // The budget is taken now, when the search really starts.
            let budget = job
                .request
                .clock
                .map(|clock| clock.budget_at(Instant::now()));
            (self.search)(&job.request, budget, &job.control.interrupt)
        }))
    }

    /// A search thread's life: run jobs until the scheduler is gone.
    fn serve(&self) {
        while let Some(job) = self.next_job() {
            self.run(job);
        }
    }

    /// Runs one job on this search thread, then decides what its result
    /// means: an answer, a retry, a requeue after preemption, or nothing.
    fn run(&self, mut job: Job) {
        let class = match job.request.priority {
            Priority::Human => "human",
            Priority::Background => "ai_v_ai",
            Priority::Analysis => "analysis",
        };
        let started = Instant::now();
        metrics::histogram!("rookery_ai_wait_seconds", "class" => class).record(
            started
                .saturating_duration_since(job.queued_at)
                .as_secs_f64(),
        );
        let searched = match &self.remote {
            // This thread waits for the worker's answer (or gives up).
            Some((remote, runtime)) => {
                match runtime.block_on(remote.search(job.id, &job.request, &job.control.interrupt))
                {
                    Ok(result) => Ok(result),
                    Err(unavailable) => {
                        tracing::info!(%unavailable, ply = job.request.ply, "AI search runs on this node");
                        let _slot = runtime.block_on(self.local.clone().acquire_owned());
                        self.search_here(&job)
                    }
                }
            }
            None => self.search_here(&job),
        };
        metrics::histogram!("rookery_ai_search_seconds", "class" => class)
            .record(started.elapsed().as_secs_f64());
        let result = match searched {
            Ok(Ok(Some(mv))) => Ok(mv),
            Ok(Ok(None)) => Err("the search found no move".to_string()),
            Ok(Err(err)) => Err(err),
            Err(panic) => Err(format!("the search panicked: {}", panic_message(&panic))),
        };
        let answer = {
            let mut queues = self.lock();
            queues.running.retain(|running| running.id != job.id);
            let answer = self.settle(&mut queues, &mut job, result);
            self.grant_leases(&mut queues);
            answer
        };
        if let Some(answer) = answer {
            if job.control.is_cancelled() {
                return;
            }
            // The game may have ended meanwhile and its actor gone: then the
            // answer has nobody to go to, which is fine. A game has one
            // search at a time and its channel room for several answers,
            // so this does not wait on the game.
            let _ = job.answers.blocking_send(answer);
        }
    }

    /// What a finished run leads to: `Some(answer)` to send, or `None`
    /// when the job was dropped or put back in a queue.
    fn settle(
        &self,
        queues: &mut Queues,
        job: &mut Job,
        result: Result<Move, String>,
    ) -> Option<AiAnswer> {
        let control = &job.control;
        if control.is_cancelled() {
            return None;
        }
        let ply = job.request.ply;
        let position = job.request.position.hash();
        if control.preempted.swap(false, Ordering::AcqRel) {
            // Its half-done answer is thrown away; it runs again, first in
            // its class, when a thread is free.
            control.interrupt.store(false, Ordering::Release);
            if control.is_cancelled() {
                return None;
            }
            let priority = job.request.priority;
            queues.queue(priority).push_front(clone_job(job));
            return None;
        }
        match result {
            Ok(mv) => Some(AiAnswer {
                ply,
                position,
                outcome: Ok(mv),
            }),
            Err(error) => {
                job.failures += 1;
                tracing::error!(ply, failures = job.failures, %error, "AI search failed");
                if job.failures <= RETRIES {
                    let priority = job.request.priority;
                    queues.queue(priority).push_front(clone_job(job));
                    None
                } else {
                    Some(AiAnswer {
                        ply,
                        position,
                        outcome: Err(SearchFailed {
                            attempts: job.failures,
                            last_error: error,
                        }),
                    })
                }
            }
        }
    }
}

/// The text a panic was raised with, when it is one.
fn panic_message(panic: &(dyn std::any::Any + Send)) -> &str {
    panic
        .downcast_ref::<&str>()
        .copied()
        .or_else(|| panic.downcast_ref::<String>().map(String::as_str))
        .unwrap_or("(no message)")
}

fn clone_job(job: &Job) -> Job {
    Job {
        id: job.id,
        request: job.request.clone(),
        control: job.control.clone(),
        answers: job.answers.clone(),
        failures: job.failures,
        queued_at: job.queued_at,
    }
}

// ---------------------------------------------------------------- analysis

/// A lease asked for and not yet granted.
struct LeaseWaiter {
    id: u64,
    control: Arc<Control>,
    granted: oneshot::Sender<()>,
}

/// One search thread lent to post-game analysis. The holder runs its own
/// blocking work (on `spawn_blocking`) polling [`Lease::stop_flag`]; when a
/// game's search needs the thread the flag is raised and
/// [`Lease::was_preempted`] says so: the holder drops its half-done result
/// and asks for a new lease. Dropping the lease gives the thread back.
pub struct Lease {
    id: u64,
    control: Arc<Control>,
    inner: Arc<Inner>,
}

impl Lease {
    /// The flag the leased work polls: raised when a game's search needs
    /// the thread (or the lease is dropped). It can move to a blocking
    /// thread.
    pub fn stop_flag(&self) -> StopFlag {
        StopFlag(self.control.clone())
    }

    /// Whether a game's search took the thread back.
    pub fn was_preempted(&self) -> bool {
        self.control.preempted.load(Ordering::Acquire)
    }
}

impl Drop for Lease {
    fn drop(&mut self) {
        self.control.cancelled.store(true, Ordering::Release);
        self.control.interrupt.store(true, Ordering::Release);
        let mut queues = self.inner.lock();
        queues.running.retain(|running| running.id != self.id);
        self.inner.grant_leases(&mut queues);
    }
}

/// A lease's stop flag, owned, for the blocking thread doing the work.
#[derive(Clone)]
pub struct StopFlag(Arc<Control>);

impl StopFlag {
    pub fn get(&self) -> &AtomicBool {
        &self.0.interrupt
    }
}

impl AiScheduler {
    /// Waits for a search thread at the lowest priority ([`Priority::Analysis`]).
    pub async fn lease(&self) -> Lease {
        let control = Arc::new(Control::default());
        let (granted, wait) = oneshot::channel();
        let inner = &self.pool.inner;
        let id = {
            let mut queues = inner.lock();
            let id = queues.next_id;
            queues.next_id += 1;
            queues.leases.push_back(LeaseWaiter {
                id,
                control: control.clone(),
                granted,
            });
            inner.grant_leases(&mut queues);
            id
        };
        // The lease exists from here: if this future is dropped before the
        // grant arrives, dropping it frees the slot it may have been given.
        let lease = Lease {
            id,
            control,
            inner: inner.clone(),
        };
        // The sender lives in the queue until granted; the scheduler lives
        // as long as `self`, so it cannot be dropped unanswered.
        let _ = wait.await;
        lease
    }
}

impl Inner {
    /// Grants waiting analysis leases while slots are free and no game's
    /// search waits.
    fn grant_leases(&self, queues: &mut Queues) {
        let waiting = |jobs: &VecDeque<Job>| jobs.iter().any(|job| !job.control.is_cancelled());
        if queues.closed || waiting(&queues.human) || waiting(&queues.background) {
            return;
        }
        while queues.running.len() < self.threads {
            let Some(waiter) = queues.leases.pop_front() else {
                return;
            };
            if waiter.granted.is_closed() {
                continue; // its holder stopped waiting
            }
            queues.running.push(Running {
                id: waiter.id,
                priority: Priority::Analysis,
                client: None,
                control: waiter.control.clone(),
            });
            // A holder that stopped waiting just now drops its lease, which
            // frees the slot again.
            let _ = waiter.granted.send(());
        }
    }

    /// A game's search arrived: when every thread is busy, one running
    /// analysis gives its thread back.
    fn preempt_analysis(&self, queues: &mut Queues) {
        if queues.running.len() < self.threads {
            return;
        }
        let already = queues.running.iter().any(|running| {
            running.priority == Priority::Analysis
                && running.control.preempted.load(Ordering::Acquire)
        });
        if already {
            return;
        }
        if let Some(running) = queues
            .running
            .iter()
            .find(|running| running.priority == Priority::Analysis)
        {
            running.control.preempted.store(true, Ordering::Release);
            running.control.interrupt.store(true, Ordering::Release);
            tracing::debug!(lease = running.id, "analysis preempted");
        }
    }
}

/// Live AI v AI games and the client (address) that created each: what
/// `--max-ai-games` and `--max-ai-games-per-client` count. An AI v AI game
/// costs a search thread for as long as it runs and nobody has to be there,
/// so without caps one client could queue the whole machine.
///
/// Entries leave when their game is seen finished (the creation path sweeps
/// before counting) or an operator stops it. Games still unfinished when the
/// server starts (a restart) are counted again from the database towards
/// the server's cap; their creator's address is not stored, so they count
/// towards no client's cap (the owner is `None`).
#[derive(Debug, Default)]
pub struct AiGameLedger {
    games: Mutex<HashMap<Uuid, Option<IpAddr>>>,
}

impl AiGameLedger {
    fn lock(&self) -> MutexGuard<'_, HashMap<Uuid, Option<IpAddr>>> {
        // One insert or remove at a time: a poisoned lock is still whole.
        self.games.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The games counted now.
    pub fn ids(&self) -> Vec<Uuid> {
        self.lock().keys().copied().collect()
    }

    pub fn forget(&self, id: Uuid) {
        self.lock().remove(&id);
    }

    /// Counts games found unfinished at start-up, whose creator is unknown.
    pub fn count_resumed(&self, ids: impl IntoIterator<Item = Uuid>) {
        let mut games = self.lock();
        for id in ids {
            games.entry(id).or_insert(None);
        }
    }

    /// Counts game `id` for `client`, unless a cap is reached: then 429
    /// `rate_limited` saying which.
    pub fn reserve(
        &self,
        id: Uuid,
        client: IpAddr,
        max_total: usize,
        max_per_client: usize,
    ) -> Result<(), ApiError> {
        let mut games = self.lock();
        if games.len() >= max_total {
            return Err(ApiError::Limited(format!(
                "the server already runs {} AI v AI games, its limit: try again when one ends",
                games.len()
            )));
        }
        let mine = games
            .values()
            .filter(|owner| **owner == Some(client))
            .count();
        if mine >= max_per_client {
            return Err(ApiError::Limited(format!(
                "you already have {mine} live AI v AI games, the limit per client: \
                 wait for one to end"
            )));
        }
        games.insert(id, Some(client));
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::AtomicU32;

    use super::*;

    const START: &str = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1";

    fn request(ply: usize, priority: Priority) -> SearchRequest {
        SearchRequest {
            ply,
            position: Position::from_fen(START).unwrap(),
            history: Vec::new(),
            level: 1,
            clock: None,
            priority,
            client: None,
        }
    }

    fn first_legal_move() -> Move {
        Position::startpos().parse_uci("e2e4").unwrap()
    }

    #[tokio::test]
    async fn answers_are_tagged_with_their_ply_and_legal() {
        let scheduler = AiScheduler::new(1, Duration::ZERO);
        let (tx, mut rx) = mpsc::channel(4);
        let first = scheduler.start(request(0, Priority::Human), tx.clone());
        let second = scheduler.start(request(7, Priority::Background), tx);
        let mut plies = Vec::new();
        for _ in 0..2 {
            let answer = rx.recv().await.expect("an answer");
            let mv = answer.outcome.expect("a move");
            assert!(Position::startpos().is_legal(mv));
            plies.push(answer.ply);
        }
        plies.sort_unstable();
        assert_eq!(plies, [0, 7]);
        drop((first, second));
    }

    #[tokio::test]
    async fn a_stopped_search_never_answers() {
        let scheduler = AiScheduler::new(1, Duration::ZERO);
        let (tx, mut rx) = mpsc::channel(4);
        // Stopped (dropped) at once, long before a search could end: it
        // must end without answering.
        drop(scheduler.start(request(3, Priority::Human), tx));
        assert!(rx.recv().await.is_none(), "the channel closes unanswered");
    }

    /// A search that fails (by panicking) its first `failures` calls.
    fn flaky(failures: u32, calls: Arc<AtomicU32>) -> SearchFn {
        Arc::new(move |_request, _budget, _stop| {
            let call = calls.fetch_add(1, Ordering::SeqCst);
            if call < failures {
                panic!("injected search failure {call}");
            }
            Ok(Some(first_legal_move()))
        })
    }

    #[tokio::test]
    async fn a_failing_search_is_retried() {
        let calls = Arc::new(AtomicU32::new(0));
        let scheduler = AiScheduler::with_search(1, Duration::ZERO, flaky(RETRIES, calls.clone()));
        let (tx, mut rx) = mpsc::channel(4);
        let _thinking = scheduler.start(request(5, Priority::Human), tx);
        let answer = rx.recv().await.expect("an answer");
        assert_eq!(answer.ply, 5);
        assert_eq!(answer.outcome, Ok(first_legal_move()));
        assert_eq!(calls.load(Ordering::SeqCst), RETRIES + 1);
    }

    #[tokio::test]
    async fn a_search_failing_every_time_is_reported_not_hung() {
        let calls = Arc::new(AtomicU32::new(0));
        let scheduler = AiScheduler::with_search(1, Duration::ZERO, flaky(u32::MAX, calls.clone()));
        let (tx, mut rx) = mpsc::channel(4);
        let _thinking = scheduler.start(request(2, Priority::Background), tx.clone());
        let answer = rx.recv().await.expect("an answer");
        let failure = answer.outcome.expect_err("a failure");
        assert_eq!(failure.attempts, RETRIES + 1);
        assert!(failure.last_error.contains("panicked"), "{failure}");
        assert_eq!(calls.load(Ordering::SeqCst), RETRIES + 1);
        // The thread is free again: a search that finds no move fails the
        // same way, and nothing is left running.
        let none: SearchFn = Arc::new(|_, _, _| Ok(None));
        let scheduler = AiScheduler::with_search(1, Duration::ZERO, none);
        let _thinking = scheduler.start(request(4, Priority::Human), tx);
        let answer = rx.recv().await.expect("an answer");
        assert_eq!(answer.outcome.expect_err("a failure").attempts, RETRIES + 1);
    }

    /// The calling thread's scheduling policy and nice value.
    #[cfg(target_os = "linux")]
    fn own_priority() -> (i32, i32) {
        // SAFETY: plain integer calls about the calling thread.
        unsafe {
            let tid = libc::syscall(libc::SYS_gettid) as libc::id_t;
            (
                libc::sched_getscheduler(0),
                libc::getpriority(libc::PRIO_PROCESS, tid),
            )
        }
    }

    /// The scheduling policy and nice value of the thread a search runs
    /// on, as the search itself reads them.
    #[cfg(target_os = "linux")]
    async fn priority_seen_by_a_search(priority: SearchPriority) -> (i32, i32) {
        let seen = Arc::new(Mutex::new(None));
        let record = seen.clone();
        let search: SearchFn = Arc::new(move |_, _, _| {
            *record.lock().unwrap() = Some(own_priority());
            Ok(Some(first_legal_move()))
        });
        let scheduler = AiScheduler::configured(1, priority, Duration::ZERO, search);
        let (tx, mut rx) = mpsc::channel(1);
        let _thinking = scheduler.start(request(1, Priority::Human), tx);
        rx.recv().await.expect("an answer");
        let seen = seen.lock().unwrap().expect("the search ran");
        seen
    }

    #[cfg(target_os = "linux")]
    #[tokio::test]
    async fn search_threads_run_at_the_priority_asked_for() {
        let before = own_priority();
        let (policy, nice) = priority_seen_by_a_search(SearchPriority::Nice(13)).await;
        assert_eq!(policy, libc::SCHED_OTHER);
        assert!(nice >= 13, "nice {nice}");
        let (policy, _) = priority_seen_by_a_search(SearchPriority::Idle).await;
        assert_eq!(policy, libc::SCHED_IDLE);
        // Only the search threads are lowered: this one keeps its own.
        assert_eq!(own_priority(), before);
    }

    /// A search that records the order searches start in, and (for AI v AI
    /// ones) blocks until stopped.
    fn recording(order: Arc<Mutex<Vec<usize>>>) -> SearchFn {
        Arc::new(move |request, _budget, stop| {
            order.lock().unwrap().push(request.ply);
            if request.priority == Priority::Background {
                while !stop.load(Ordering::Acquire) {
                    std::thread::sleep(Duration::from_millis(1));
                }
            }
            Ok(Some(first_legal_move()))
        })
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn human_searches_go_first_and_preempt_ai_v_ai_ones() {
        let order = Arc::new(Mutex::new(Vec::new()));
        let scheduler = AiScheduler::with_search(1, Duration::ZERO, recording(order.clone()));
        let (tx, mut rx) = mpsc::channel(16);
        // Two AI v AI searches: the first runs (and never ends by itself),
        // the second waits.
        let background: Vec<_> = [100, 101]
            .map(|ply| scheduler.start(request(ply, Priority::Background), tx.clone()))
            .into();
        while order.lock().unwrap().is_empty() {
            tokio::time::sleep(Duration::from_millis(1)).await;
        }
        // A human's search arrives: it runs next, before the waiting AI v
        // AI one, by preempting the running one.
        let human = scheduler.start(request(1, Priority::Human), tx.clone());
        let answer = rx.recv().await.expect("the human's answer");
        assert_eq!(answer.ply, 1);
        assert_eq!(order.lock().unwrap()[..2], [100, 1]);
        // The preempted search runs again, first: stop the AI v AI games.
        while order.lock().unwrap().len() < 3 {
            tokio::time::sleep(Duration::from_millis(1)).await;
        }
        assert_eq!(order.lock().unwrap()[2], 100);
        drop((background, human));
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn one_clients_many_games_do_not_keep_another_clients_opponent_waiting() {
        let flooder: IpAddr = "192.0.2.1".parse().unwrap();
        let other: IpAddr = "192.0.2.2".parse().unwrap();
        // The flooder's searches run until stopped; the other client's
        // answers at once.
        let order = Arc::new(Mutex::new(Vec::new()));
        let record = order.clone();
        let search: SearchFn = Arc::new(move |request, _budget, stop| {
            record.lock().unwrap().push(request.ply);
            if request.client == Some(flooder) {
                while !stop.load(Ordering::Acquire) {
                    std::thread::sleep(Duration::from_millis(1));
                }
            }
            Ok(Some(first_legal_move()))
        });
        let scheduler = AiScheduler::with_search(2, Duration::ZERO, search);
        let (tx, mut rx) = mpsc::channel(16);
        let for_client = |ply, client| SearchRequest {
            client: Some(client),
            ..request(ply, Priority::Human)
        };
        // Three of the flooder's games want a move: two run, one waits.
        let flood: Vec<_> = [1, 2, 3]
            .map(|ply| scheduler.start(for_client(ply, flooder), tx.clone()))
            .into();
        while order.lock().unwrap().len() < 2 {
            tokio::time::sleep(Duration::from_millis(1)).await;
        }
        // The other client's search goes before the flooder's waiting one,
        // and one of the flooder's two running searches makes room for it
        // (without that it would wait for ever here).
        let other_search = scheduler.start(for_client(10, other), tx.clone());
        let answer = tokio::time::timeout(Duration::from_secs(30), rx.recv())
            .await
            .expect("the other client's search ran")
            .expect("the other client's answer");
        assert_eq!(answer.ply, 10);
        assert_eq!(order.lock().unwrap()[2], 10, "{:?}", order.lock().unwrap());
        // The flooder keeps one thread meanwhile, and gets both back.
        while order.lock().unwrap().len() < 4 {
            tokio::time::sleep(Duration::from_millis(1)).await;
        }
        drop((flood, other_search));
    }

    #[test]
    fn the_ledger_caps_games_in_total_and_per_client() {
        let ledger = AiGameLedger::default();
        let a: IpAddr = "192.0.2.1".parse().unwrap();
        let b: IpAddr = "192.0.2.2".parse().unwrap();
        let ids: Vec<Uuid> = (0..4).map(|_| Uuid::new_v4()).collect();
        ledger.reserve(ids[0], a, 3, 2).unwrap();
        ledger.reserve(ids[1], a, 3, 2).unwrap();
        let refused = ledger.reserve(ids[2], a, 3, 2).unwrap_err();
        assert_eq!(refused.code(), "rate_limited");
        assert!(refused.message().contains("per client"), "{refused}");
        ledger.reserve(ids[2], b, 3, 2).unwrap();
        let refused = ledger.reserve(ids[3], b, 3, 2).unwrap_err();
        assert!(refused.message().contains("server"), "{refused}");
        ledger.forget(ids[0]);
        ledger.reserve(ids[3], a, 3, 2).unwrap();
        assert_eq!(ledger.ids().len(), 3);
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn an_analysis_lease_yields_to_any_game_search_and_waits_behind_them() {
        let scheduler = AiScheduler::new(1, Duration::ZERO);
        let lease = scheduler.lease().await;
        let stop = lease.stop_flag();
        assert!(!stop.get().load(Ordering::Acquire));
        // A game's search arrives while the only slot is lent: the lease is
        // told to give it back, and the search answers.
        let (tx, mut rx) = mpsc::channel(4);
        let _thinking = scheduler.start(request(1, Priority::Background), tx);
        assert!(lease.was_preempted());
        assert!(stop.get().load(Ordering::Acquire));
        drop(lease);
        let answer = rx.recv().await.expect("the game's answer");
        assert_eq!(answer.ply, 1);
        // The slot is free again: a new lease is granted.
        let again = tokio::time::timeout(Duration::from_secs(30), scheduler.lease())
            .await
            .expect("a new lease");
        assert!(!again.was_preempted());
    }

    #[test]
    fn resumed_games_count_for_the_server_not_for_a_client() {
        let ledger = AiGameLedger::default();
        let a: IpAddr = "192.0.2.1".parse().unwrap();
        let resumed = [Uuid::new_v4(), Uuid::new_v4()];
        ledger.count_resumed(resumed);
        ledger.count_resumed(resumed);
        assert_eq!(ledger.ids().len(), 2);
        // Per client 2: the resumed games are nobody's.
        ledger.reserve(Uuid::new_v4(), a, 3, 2).unwrap();
        let refused = ledger.reserve(Uuid::new_v4(), a, 3, 2).unwrap_err();
        assert!(refused.message().contains("server"), "{refused}");
        ledger.forget(resumed[0]);
        ledger.reserve(Uuid::new_v4(), a, 3, 2).unwrap();
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_queued_search_plans_with_the_clock_it_has_when_it_starts() {
        // The only thread is busy for 300 ms; a timed search queued
        // meanwhile must not plan with the 10 s its clock showed when it
        // was queued.
        let budgets = Arc::new(Mutex::new(Vec::new()));
        let record = budgets.clone();
        let search: SearchFn = Arc::new(move |request, budget, _stop| {
            if request.ply == 1 {
                std::thread::sleep(Duration::from_millis(300));
            }
            record.lock().unwrap().push(budget);
            Ok(Some(first_legal_move()))
        });
        let scheduler = AiScheduler::with_search(1, Duration::ZERO, search);
        let (tx, mut rx) = mpsc::channel(4);
        let busy = scheduler.start(request(1, Priority::Human), tx.clone());
        let timed = SearchRequest {
            clock: Some(ClockSnapshot {
                remaining: Duration::from_secs(10),
                increment: Duration::ZERO,
                taken_at: Instant::now(),
            }),
            ..request(2, Priority::Human)
        };
        let waiting = scheduler.start(timed, tx);
        for _ in 0..2 {
            rx.recv().await.expect("an answer");
        }
        let budget = budgets.lock().unwrap()[1].expect("a clock budget");
        assert!(
            budget.remaining <= Duration::from_millis(9_700),
            "planned with {:?} after waiting 300 ms",
            budget.remaining
        );
        drop((busy, waiting));
    }

    #[test]
    fn the_budget_is_what_is_left_when_the_search_starts() {
        let taken_at = Instant::now();
        let snapshot = ClockSnapshot {
            remaining: Duration::from_secs(10),
            increment: Duration::from_secs(1),
            taken_at,
        };
        let budget = snapshot.budget_at(taken_at + Duration::from_secs(3));
        assert_eq!(budget.remaining, Duration::from_secs(7));
        assert_eq!(budget.increment, Duration::from_secs(1));
        let late = snapshot.budget_at(taken_at + Duration::from_secs(30));
        assert_eq!(late.remaining, Duration::ZERO);
    }
}

//! The AI scheduler's public face: [`AiScheduler`] takes a game's
//! [`SearchRequest`], queues it (`queue.rs`) for one of its search threads
//! (`pool.rs`), and hands back a [`Thinking`] handle that stops the search
//! when dropped; the [`AiAnswer`] arrives later on the game's channel. Also
//! here: how the search threads give way to the runtime's
//! ([`SearchPriority`]) and what operators see ([`AiStats`]).
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

use std::collections::VecDeque;
use std::net::IpAddr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::time::Duration;

use rookery_engine::ai::{choose_move, ClockBudget};
use rookery_engine::{Move, Position};
use tokio::sync::mpsc;
use tokio::time::Instant;

use crate::ai::pool::{lower_priority, Inner, Pool};
use crate::ai::queue::{Control, Job, Queues};
use crate::ai::remote::RemoteSearch;

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
    /// Post-game analysis ([`AiScheduler::analysis_slot`]): runs only when no
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
    /// The client whose game this is
    /// ([`crate::live::game::LiveGame::client`]): human searches of
    /// different clients are served in turn.
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
    pub(super) pool: Arc<Pool>,
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

    /// How many human games' searches each client is owed at once
    /// (`--max-ai-searches-per-client`, at least one): beyond it a
    /// client's searches wait behind every other client's (`queue.rs`).
    pub fn set_max_searches_per_client(&self, searches: usize) {
        self.pool.inner.lock().max_per_client = searches.max(1);
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

#[cfg(test)]
mod tests {
    use std::sync::atomic::AtomicU32;

    use super::*;
    use crate::ai::testing::{first_legal_move, request};

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

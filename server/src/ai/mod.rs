//! The AI: the engine's searches for computer seats, run fairly on a small
//! pool of dedicated threads (or on worker processes), and post-game
//! analysis on the same threads when no game needs them.
//!
//! A search is CPU-bound for up to seconds, so it never runs on the async
//! runtime, nor on tokio's blocking pool: the scheduler owns `--ai-threads`
//! search threads (one per core by default) that lower their own OS
//! priority, so the runtime's threads, which carry every WebSocket and HTTP
//! request, still get a core as soon as they wake up. Waiting searches sit
//! in a queue that costs no thread. A human's search goes before an AI v AI
//! game's, clients take turns (the fewest threads held, then the least
//! search time lately, first), and a human's search arriving while every
//! thread is busy preempts a running AI v AI search, or one of a client's
//! many, or, for a newcomer, the search of the client that used the most
//! search time lately: a level-1 reply is not held up by other clients'
//! masters.
//!
//! Every search carries a stop flag (raised when its game no longer wants
//! it: the game ended, moved on, or the server is shutting down) and the ply
//! it was started for: the live game drops an answer whose ply is no longer
//! current.
//!
//! The files, by concern:
//!
//! - [`scheduler`]: the public API: [`AiScheduler`] (start a search, get a
//!   [`Thinking`] handle and later an [`AiAnswer`]), the request and its
//!   clock snapshot, the search threads' OS priority, the operators' stats.
//! - `queue.rs`: the queues, per-client fairness and preemption.
//! - `pool.rs`: the search threads: taking a job, running it (here or on a
//!   worker), retrying a failure, putting a preempted search back.
//! - [`slots`]: search threads lent to post-game analysis at the lowest
//!   priority ([`AnalysisSlot`]).
//! - [`remote`]: searches sent to worker processes over NATS.
//! - [`analysis`]: post-game analysis jobs.
//! - [`board`]: the analysis board's evaluations of any position, on
//!   demand, on the same lent threads (issue 36).
//!
//! The AI v AI admission caps (how many shows may run at once, in total and
//! per client) are a limit at the edge:
//! [`crate::http::rate_limit::AiGameLedger`].

pub mod analysis;
pub mod board;
mod pool;
mod queue;
pub mod remote;
pub mod scheduler;
pub mod slots;
#[cfg(test)]
mod testing;

pub use queue::{DEFAULT_MAX_SEARCHES_PER_CLIENT, PREEMPT_MARGIN, USAGE_HALF_LIFE};
pub use scheduler::{
    AiAnswer, AiScheduler, AiStats, ClockSnapshot, Priority, SearchFailed, SearchFn,
    SearchPriority, SearchRequest, SearchResult, Thinking, DEFAULT_NICE, RETRIES,
};
pub use slots::{AnalysisSlot, StopFlag};

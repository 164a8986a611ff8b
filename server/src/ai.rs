//! The AI scheduler: runs the engine's searches for computer seats.
//!
//! A search is CPU-bound for up to seconds, so it never runs on the async
//! runtime: each one goes to `spawn_blocking`, and a [`Semaphore`] with one
//! permit per core bounds how many run at once (more would only slice the
//! same cores thinner and make every AI slower). A search waits for a permit
//! in an async task, so waiting costs no thread. While every core is busy
//! thinking, the runtime's own threads still get scheduled by the OS, so
//! human moves and broadcasts in other games keep flowing.
//!
//! Every search carries a stop flag (raised when its game ends or the server
//! shuts down) and the ply it was started for: the live game drops an answer
//! whose ply is no longer current.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use rookery_engine::ai::{choose_move, ClockBudget};
use rookery_engine::{Move, Position};
use tokio::sync::{mpsc, Semaphore};

/// What a search found, for the ply it was started at.
#[derive(Debug)]
pub struct AiAnswer {
    pub ply: usize,
    pub mv: Option<Move>,
}

/// A running search, as its game sees it.
#[derive(Debug)]
pub struct Thinking {
    pub ply: usize,
    stop: Arc<AtomicBool>,
}

impl Thinking {
    /// Asks the search to stop; its answer (if any) will be stale.
    pub fn stop(&self) {
        self.stop.store(true, Ordering::Relaxed);
    }
}

impl Drop for Thinking {
    fn drop(&mut self) {
        self.stop();
    }
}

/// What a search needs, copied out of the game.
pub struct SearchRequest {
    pub ply: usize,
    pub position: Position,
    /// Hashes of the positions before the current one, oldest first.
    pub history: Vec<u64>,
    pub level: u8,
    pub clock: Option<ClockBudget>,
}

#[derive(Debug, Clone)]
pub struct AiScheduler {
    permits: Arc<Semaphore>,
    /// Minimum time between two moves of an AI v AI game.
    pub ai_move_delay: Duration,
}

impl AiScheduler {
    pub fn new(threads: usize, ai_move_delay: Duration) -> AiScheduler {
        AiScheduler {
            permits: Arc::new(Semaphore::new(threads.max(1))),
            ai_move_delay,
        }
    }

    /// Starts a search; its answer arrives on `answers`.
    pub fn start(&self, request: SearchRequest, answers: mpsc::Sender<AiAnswer>) -> Thinking {
        let stop = Arc::new(AtomicBool::new(false));
        let thinking = Thinking {
            ply: request.ply,
            stop: stop.clone(),
        };
        let permits = self.permits.clone();
        tokio::spawn(async move {
            let ply = request.ply;
            // The semaphore is never closed, so acquiring only fails if it is;
            // then there is nothing to do but give up this search.
            let Ok(permit) = permits.acquire_owned().await else {
                return;
            };
            if stop.load(Ordering::Relaxed) {
                return;
            }
            let search_stop = stop.clone();
            let searched = tokio::task::spawn_blocking(move || {
                let _permit = permit;
                let level = rookery_engine::level::level(request.level)?;
                choose_move(
                    &request.position,
                    &request.history,
                    level,
                    request.clock,
                    &search_stop,
                )
            })
            .await;
            let mv = match searched {
                Ok(mv) => mv,
                Err(err) => {
                    tracing::error!(%err, "AI search panicked");
                    None
                }
            };
            if stop.load(Ordering::Relaxed) {
                return;
            }
            // The game may have ended meanwhile and its actor gone: then the
            // answer has nobody to go to, which is fine.
            let _ = answers.send(AiAnswer { ply, mv }).await;
        });
        thinking
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request(ply: usize, fen: &str) -> SearchRequest {
        SearchRequest {
            ply,
            position: Position::from_fen(fen).unwrap(),
            history: Vec::new(),
            level: 1,
            clock: None,
        }
    }

    const START: &str = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1";

    #[tokio::test]
    async fn answers_are_tagged_with_their_ply_and_legal() {
        let scheduler = AiScheduler::new(1, Duration::ZERO);
        let (tx, mut rx) = mpsc::channel(4);
        let first = scheduler.start(request(0, START), tx.clone());
        let second = scheduler.start(request(7, START), tx);
        let mut plies = Vec::new();
        for _ in 0..2 {
            let answer = rx.recv().await.expect("an answer");
            let mv = answer.mv.expect("a move");
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
        // Stopped (dropped) before its task first runs on this one-thread
        // runtime: it must end without answering.
        drop(scheduler.start(request(3, START), tx));
        assert!(rx.recv().await.is_none(), "the channel closes unanswered");
    }
}

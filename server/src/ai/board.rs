//! The analysis board's evaluations (issue 36): any position, set up by
//! hand or read from a FEN or a PGN, evaluated once on demand for whoever
//! asks, and nothing stored.
//!
//! Each evaluation is one search of the post-game analysis's kind
//! ([`crate::ai::analysis::search_line`]: the strongest level's
//! evaluation, the `--analysis-nodes` budget, a fresh search state), run on
//! a search thread lent at the lowest priority
//! ([`AiScheduler::analysis_slot`]), never on the async runtime: a game's
//! search takes the thread back at once, and the evaluation runs again when
//! a thread is free. Bounds: at most [`MAX_RUNNING`] evaluations search at
//! once server-wide, and a client has at most `--max-analyses-per-client`
//! evaluations waiting or searching; a request that cannot get its turn
//! within [`MAX_WAIT`] is refused (429) rather than queued without end.
//! (The edge also charges each request to the client's analysis-board token
//! bucket, `--board-analyses-per-minute`.)
//!
//! Cancellation: the search holds its slot while the request waits for it;
//! a request dropped (its client went away, or the server is shutting
//! down) drops the slot, which raises the search's stop flag, so the
//! thread is free within a few nodes.

use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use rookery_engine::{Game, Move};
use tokio::sync::Semaphore;

use crate::ai::analysis::{search_line, AnalysisError, Eval};
use crate::ai::AiScheduler;

/// Evaluations that search at once, server-wide.
pub const MAX_RUNNING: usize = 2;

/// How long a request waits for its turn before it is refused.
pub const MAX_WAIT: Duration = Duration::from_secs(10);

/// One position's evaluation.
#[derive(Debug, Clone)]
pub struct BoardEval {
    /// White's point of view.
    pub eval: Eval,
    /// The principal variation, the best move first (empty when the game
    /// is over in this position).
    pub line: Vec<Move>,
    /// Depth of the last finished iteration, and the nodes searched.
    pub depth: u32,
    pub nodes: u64,
}

#[derive(Clone)]
pub struct BoardAnalyses {
    inner: Arc<Inner>,
}

struct Inner {
    ai: AiScheduler,
    nodes: u64,
    max_per_client: usize,
    running: Semaphore,
    /// Evaluations waiting or searching, per client.
    clients: Mutex<HashMap<IpAddr, usize>>,
}

/// A client's place among the evaluations in progress, given back when
/// dropped (answered, refused or cancelled alike).
struct Place {
    inner: Arc<Inner>,
    client: IpAddr,
}

impl Drop for Place {
    fn drop(&mut self) {
        let mut clients = self.inner.clients();
        if let Some(count) = clients.get_mut(&self.client) {
            *count -= 1;
            if *count == 0 {
                clients.remove(&self.client);
            }
        }
    }
}

impl Inner {
    fn clients(&self) -> MutexGuard<'_, HashMap<IpAddr, usize>> {
        // Counters only: a poisoned map is still whole.
        self.clients.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

impl BoardAnalyses {
    /// `nodes`: the search budget of one evaluation (`--analysis-nodes`);
    /// `max_per_client`: evaluations one client may have in progress.
    pub fn new(ai: AiScheduler, nodes: u64, max_per_client: usize) -> BoardAnalyses {
        BoardAnalyses {
            inner: Arc::new(Inner {
                ai,
                nodes: nodes.max(1),
                max_per_client: max_per_client.max(1),
                running: Semaphore::new(MAX_RUNNING),
                clients: Mutex::new(HashMap::new()),
            }),
        }
    }

    pub fn nodes(&self) -> u64 {
        self.inner.nodes
    }

    /// Evaluates the last position of `game` for `client`. Refused (429,
    /// [`AnalysisError::Limited`]) when the client already has its share in
    /// progress or the turn does not come within [`MAX_WAIT`].
    pub async fn evaluate(&self, game: Game, client: IpAddr) -> Result<BoardEval, AnalysisError> {
        let _place = self.take_place(client)?;
        let inner = &self.inner;
        let wait = async {
            let permit = inner
                .running
                .acquire()
                .await
                .map_err(|_| AnalysisError::ShuttingDown)?;
            let slot = inner.ai.analysis_slot().await;
            Ok::<_, AnalysisError>((permit, slot))
        };
        let (_permit, mut slot) = tokio::time::timeout(MAX_WAIT, wait).await.map_err(|_| {
            AnalysisError::Limited(
                "the engine is busy with games: try the analysis again in a moment".into(),
            )
        })??;
        let game = Arc::new(game);
        let nodes = inner.nodes;
        loop {
            let stop = slot.stop_flag();
            let position = game.clone();
            let found =
                tokio::task::spawn_blocking(move || search_line(&position, nodes, stop.get()))
                    .await
                    .map_err(AnalysisError::internal)?;
            let preempted = slot.was_preempted();
            if let (Some(found), false) = (found, preempted) {
                return Ok(BoardEval {
                    eval: found.eval,
                    line: found.line,
                    depth: found.depth,
                    nodes: found.nodes,
                });
            }
            // A game's search took the thread: run again on the next one.
            drop(slot);
            slot = inner.ai.analysis_slot().await;
        }
    }

    fn take_place(&self, client: IpAddr) -> Result<Place, AnalysisError> {
        let mut clients = self.inner.clients();
        let count = clients.entry(client).or_insert(0);
        if *count >= self.inner.max_per_client {
            return Err(AnalysisError::Limited(format!(
                "you already have {count} analysis board evaluations in progress, the limit per \
                 client: wait for their answers"
            )));
        }
        *count += 1;
        Ok(Place {
            inner: self.inner.clone(),
            client,
        })
    }
}

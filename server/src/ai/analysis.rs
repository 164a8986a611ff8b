//! Post-game analysis: the engine evaluates every position of a finished
//! game, in the background, without ever slowing a game down.
//!
//! A job searches the positions one by one with the evaluation of the
//! strongest level (level 8's: the engine's built-in network), each with
//! the same fixed node budget (`--analysis-nodes`) and a fresh search state,
//! so a position's result depends on the position, its history and the
//! budget alone: a job interrupted (by a game's search taking the thread
//! back, or by a restart) and searched again gives the same numbers. Each
//! search runs on a thread lent by the AI scheduler at its lowest priority,
//! an analysis slot ([`crate::ai::AiScheduler::analysis_slot`]); a
//! preempted search is thrown away and run again when a thread is free.
//!
//! Bounds: at most `--max-analyses` jobs search at once (the others wait
//! their turn, `queued`), at most [`MAX_WAITING`] jobs are unfinished, and
//! one client may have `--max-analyses-per-client` unfinished jobs it asked
//! for. Every position's result is stored as it is found; at start-up the
//! jobs left queued or running resume where they stopped.
//!
//! Judging a move: the evaluations before and after it, from the mover's
//! point of view, capped at ±[`CP_CAP`] (a mate counts as the cap), give
//! its centipawn loss; the loss of winning chances (lichess's logistic
//! curve) gives its judgement, see [`judge`].

use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use rookery_engine::search::{Limits, Score, Searcher};
use rookery_engine::types::Color;
use rookery_engine::{level, nnue};
use rookery_engine::{Game, Position};
use tokio::sync::{watch, Semaphore};
use tokio::task::JoinSet;
use uuid::Uuid;

use crate::ai::AiScheduler;
use crate::store::analysis::{AnalysisWrite, MoveJudgement, PositionRow};
use crate::store::{now_ms, Store, StoreError};

/// Why an analysis was refused or failed; the edge answers it
/// (`http/error.rs`).
#[derive(Debug, thiserror::Error)]
pub enum AnalysisError {
    /// A cap was reached, saying which (429 `rate_limited`).
    #[error("{0}")]
    Limited(String),
    #[error("no such game")]
    NoSuchGame,
    #[error("the server is shutting down")]
    ShuttingDown,
    #[error(transparent)]
    Store(#[from] StoreError),
    /// A failure that is ours (logged, never sent).
    #[error("{0}")]
    Internal(String),
}

impl AnalysisError {
    pub fn internal(cause: impl std::fmt::Display) -> AnalysisError {
        AnalysisError::Internal(cause.to_string())
    }

    pub fn log(&self) {
        match self {
            AnalysisError::Store(err) => err.log(),
            AnalysisError::Internal(cause) => tracing::error!(%cause, "internal error"),
            AnalysisError::ShuttingDown => tracing::info!("refused: shutting down"),
            other => tracing::debug!(message = %other, "refused"),
        }
    }
}

/// Evaluations are capped here for losses and judgements: beyond it a
/// position is won whatever the exact number.
pub const CP_CAP: i32 = 1000;

/// Unfinished jobs at most, server-wide (queued ones cost only a row and a
/// waiting task).
pub const MAX_WAITING: usize = 256;

/// The transposition table of one position's search: small, and fresh for
/// each position so results do not depend on what was searched before.
const HASH_MB: usize = 4;

/// Winning-chance losses at which a move is an inaccuracy, a mistake, a
/// blunder (on the scale -1..1 of [`winning_chances`]; lichess's values).
const INACCURACY: f64 = 0.1;
const MISTAKE: f64 = 0.2;
const BLUNDER: f64 = 0.3;

/// Tuning of the analysis service (from the flags).
#[derive(Debug, Clone, Copy)]
pub struct AnalysisOptions {
    pub max_running: usize,
    pub max_per_client: usize,
    pub nodes_per_ply: u64,
}

/// A position's evaluation, White's point of view.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Eval {
    Cp(i32),
    /// Mate in this many moves: positive, White mates; negative, Black
    /// mates; 0, the side to move is checkmated.
    Mate(i32),
}

impl Eval {
    /// Capped centipawns from `side`'s point of view; `to_move` is the side
    /// to move in the position (for a checkmated one).
    pub fn capped_for(self, side: Color, to_move: Color) -> i32 {
        let white = match self {
            Eval::Cp(cp) => cp.clamp(-CP_CAP, CP_CAP),
            Eval::Mate(0) if to_move == Color::White => -CP_CAP,
            Eval::Mate(0) => CP_CAP,
            Eval::Mate(n) if n > 0 => CP_CAP,
            Eval::Mate(_) => -CP_CAP,
        };
        if side == Color::White {
            white
        } else {
            -white
        }
    }
}

/// Winning chances (-1: lost, 1: won) of a capped evaluation, on lichess's
/// logistic curve.
pub fn winning_chances(cp: i32) -> f64 {
    2.0 / (1.0 + (-0.003_682_08 * f64::from(cp)).exp()) - 1.0
}

/// A move's centipawn loss and judgement from the mover's capped
/// evaluations before and after it. `best` is whether it was the engine's
/// move: then it lost nothing (the difference is the search's noise).
pub fn judge(before: i32, after: i32, best: bool) -> (i32, Option<&'static str>) {
    if best {
        return (0, None);
    }
    let loss = (before - after).max(0);
    let drop = winning_chances(before) - winning_chances(after);
    let judgement = if drop >= BLUNDER {
        Some("blunder")
    } else if drop >= MISTAKE {
        Some("mistake")
    } else if drop >= INACCURACY {
        Some("inaccuracy")
    } else {
        None
    };
    (loss, judgement)
}

/// Evaluates one position within `nodes`, with the strongest level's
/// evaluation (the built-in network, as [`rookery_engine::ai`] sets it for
/// level 8): its evaluation and best move, or the evaluation of a position
/// where the game is over. `None` when `stop` cut the search short.
pub fn evaluate(
    game: &Game,
    nodes: u64,
    stop: &std::sync::atomic::AtomicBool,
) -> Option<(Eval, Option<rookery_engine::Move>)> {
    search_line(game, nodes, stop).map(|found| (found.eval, found.line.first().copied()))
}

/// What one position's search found.
#[derive(Debug, Clone)]
pub struct Found {
    /// White's point of view.
    pub eval: Eval,
    /// The principal variation, the best move first (empty when the game
    /// is over in this position).
    pub line: Vec<rookery_engine::Move>,
    pub depth: u32,
    pub nodes: u64,
}

/// [`evaluate`] with the whole line the engine expects: the search of the
/// post-game analysis, also the analysis board's (`ai/board.rs`).
pub fn search_line(game: &Game, nodes: u64, stop: &std::sync::atomic::AtomicBool) -> Option<Found> {
    let position = game.position();
    if let Some(outcome) = game.outcome() {
        let eval = if outcome.winner.is_some() {
            Eval::Mate(0)
        } else {
            Eval::Cp(0)
        };
        return Some(Found {
            eval,
            line: Vec::new(),
            depth: 0,
            nodes: 0,
        });
    }
    let limits = Limits {
        nodes: Some(nodes.max(1)),
        ..Limits::default()
    };
    let mut searcher = Searcher::new(HASH_MB);
    searcher.set_network(level::strongest().network.then(nnue::built_in));
    let result = searcher.search(position, game.hashes(), &limits, stop, |_| {});
    if stop.load(std::sync::atomic::Ordering::Acquire) {
        return None;
    }
    let white = position.turn() == Color::White;
    let eval = match result.score {
        Score::Cp(cp) => Eval::Cp(if white { cp } else { -cp }),
        Score::Mate(n) => Eval::Mate(if white { n } else { -n }),
    };
    // The line starts with the move the search chose (they differ only
    // under a handicap, which analysis never sets).
    let mut line = result.pv;
    match (result.best_move, line.first()) {
        (Some(best), Some(&first)) if best != first => line = vec![best],
        (Some(best), None) => line = vec![best],
        _ => {}
    }
    Some(Found {
        eval,
        line,
        depth: result.depth,
        nodes: result.nodes,
    })
}

#[derive(Clone)]
pub struct Analyses {
    inner: Arc<Inner>,
}

struct Inner {
    store: Store,
    ai: AiScheduler,
    options: AnalysisOptions,
    running: Semaphore,
    /// Unfinished jobs of this run and the client that asked (None: resumed).
    jobs: Mutex<HashMap<Uuid, Option<IpAddr>>>,
    tasks: Mutex<JoinSet<()>>,
    shutdown: watch::Sender<bool>,
}

impl Analyses {
    pub fn new(store: Store, ai: AiScheduler, options: AnalysisOptions) -> Analyses {
        Analyses {
            inner: Arc::new(Inner {
                store,
                ai,
                options,
                running: Semaphore::new(options.max_running.max(1)),
                jobs: Mutex::new(HashMap::new()),
                tasks: Mutex::new(JoinSet::new()),
                shutdown: watch::Sender::new(false),
            }),
        }
    }

    pub fn nodes_per_ply(&self) -> u64 {
        self.inner.options.nodes_per_ply
    }

    fn jobs(&self) -> MutexGuard<'_, HashMap<Uuid, Option<IpAddr>>> {
        // One insert or remove at a time: a poisoned map is still whole.
        self.inner
            .jobs
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }

    /// Starts the job of finished game `id` (with `positions` positions)
    /// for `client`, unless it already runs in this process. Caps: 429
    /// `rate_limited` saying which.
    pub async fn request(
        &self,
        id: Uuid,
        positions: usize,
        client: IpAddr,
    ) -> Result<(), AnalysisError> {
        {
            let mut jobs = self.jobs();
            if jobs.contains_key(&id) {
                return Ok(());
            }
            if jobs.len() >= MAX_WAITING {
                return Err(AnalysisError::Limited(format!(
                    "the server already has {} analyses waiting, its limit: try again later",
                    jobs.len()
                )));
            }
            let mine = jobs.values().filter(|who| **who == Some(client)).count();
            if mine >= self.inner.options.max_per_client {
                return Err(AnalysisError::Limited(format!(
                    "you already have {mine} analyses waiting or running, the limit per client: \
                     wait for one to finish"
                )));
            }
            jobs.insert(id, Some(client));
        }
        let stored = self
            .inner
            .store
            .request_analysis(id, self.inner.options.nodes_per_ply, positions)
            .await;
        if let Err(err) = stored {
            self.jobs().remove(&id);
            return Err(err.into());
        }
        self.spawn(id);
        Ok(())
    }

    /// Resumes the jobs a previous run left unfinished (in the background).
    pub fn start_background(&self) {
        let analyses = self.clone();
        self.tasks().spawn(async move {
            match analyses.inner.store.unfinished_analyses().await {
                Ok(ids) => {
                    let count = ids.len();
                    for id in ids {
                        let fresh = analyses.jobs().insert(id, None).is_none();
                        if fresh {
                            analyses.spawn(id);
                        }
                    }
                    if count > 0 {
                        tracing::info!(count, "unfinished analyses resumed");
                    }
                }
                Err(err) => {
                    tracing::error!("could not list the analyses to resume");
                    err.log();
                }
            }
        });
    }

    fn tasks(&self) -> MutexGuard<'_, JoinSet<()>> {
        // Spawns and drains only: a poisoned set is still whole.
        self.inner
            .tasks
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }

    fn spawn(&self, id: Uuid) {
        let analyses = self.clone();
        self.tasks().spawn(async move {
            let mut shutdown = analyses.inner.shutdown.subscribe();
            let stopping = *shutdown.borrow();
            if stopping {
                return;
            }
            tokio::select! {
                outcome = analyses.run(id) => {
                    if let Err(err) = outcome {
                        err.log();
                        let failed = AnalysisWrite::Status {
                            game_id: id.to_string(),
                            status: "failed",
                            error: Some(err.to_string()),
                            finished_at: Some(now_ms()),
                            acpl: [None, None],
                        };
                        if let Err(err) = analyses.inner.store.write_analysis(failed).await {
                            err.log();
                        }
                    }
                }
                // Stopped mid-job: the stored positions stay, the job stays
                // `running`, and the next start resumes it.
                _ = async { while !*shutdown.borrow_and_update() { if shutdown.changed().await.is_err() { break; } } } => {}
            }
            analyses.jobs().remove(&id);
        });
    }

    /// One job, from its first unevaluated position to the end.
    async fn run(&self, id: Uuid) -> Result<(), AnalysisError> {
        let inner = &self.inner;
        let _permit = inner
            .running
            .acquire()
            .await
            .map_err(|_| AnalysisError::ShuttingDown)?;
        let saved = inner
            .store
            .saved_game(id)
            .await?
            .ok_or(AnalysisError::NoSuchGame)?;
        // The stored moves replayed (blocking work for a long game).
        let game = tokio::task::spawn_blocking(move || {
            let mut game = Game::from_fen(&saved.initial_fen)
                .map_err(|err| AnalysisError::internal(format!("game {id}: stored FEN: {err}")))?;
            game.set_castling_mode(saved.variant.castling_mode());
            for uci in &saved.moves {
                game.play_uci(uci).map_err(|err| {
                    AnalysisError::internal(format!("game {id}: stored move {uci}: {err}"))
                })?;
            }
            Ok::<_, AnalysisError>(game)
        })
        .await
        .map_err(AnalysisError::internal)??;
        let stored = inner
            .store
            .analysis(id)
            .await?
            .map(|(_, rows)| rows)
            .unwrap_or_default();
        inner
            .store
            .write_analysis(AnalysisWrite::Status {
                game_id: id.to_string(),
                status: "running",
                error: None,
                finished_at: None,
                acpl: [None, None],
            })
            .await?;
        // The positions of the game, replayed: `replay[k]` after k moves.
        let moves = game.moves().to_vec();
        let mut evals: Vec<(Eval, Option<rookery_engine::Move>)> = Vec::new();
        for row in &stored {
            if usize::try_from(row.ply).ok() != Some(evals.len()) {
                break;
            }
            let eval = match (row.cp, row.mate) {
                (_, Some(mate)) => Eval::Mate(mate as i32),
                (cp, None) => Eval::Cp(cp.unwrap_or(0) as i32),
            };
            let best = match &row.best_uci {
                Some(uci) => Some(
                    replay(&game, evals.len())
                        .position()
                        .parse_uci(uci)
                        .map_err(|err| {
                            AnalysisError::internal(format!("stored best move {uci}: {err}"))
                        })?,
                ),
                None => None,
            };
            evals.push((eval, best));
        }
        let mut losses: [Vec<i32>; 2] = [Vec::new(), Vec::new()];
        // Losses of the moves judged before a restart.
        for row in stored.iter().take(evals.len().saturating_sub(1)) {
            let side = replay(&game, row.ply as usize).position().turn();
            losses[side_index(side)].push(row.loss.unwrap_or(0) as i32);
        }
        for ply in evals.len()..=moves.len() {
            let position_game = replay(&game, ply);
            let (eval, best) = self.search(position_game.clone()).await?;
            let previous_move = if ply > 0 {
                let (before, best_before) = evals[ply - 1];
                let mover = replay(&game, ply - 1).position().turn();
                let to_move_before = mover;
                let to_move_after = position_game.position().turn();
                let (loss, judgement) = judge(
                    before.capped_for(mover, to_move_before),
                    eval.capped_for(mover, to_move_after),
                    best_before == Some(moves[ply - 1]),
                );
                losses[side_index(mover)].push(loss);
                Some(MoveJudgement {
                    ply: (ply - 1) as i64,
                    loss: i64::from(loss),
                    judgement,
                })
            } else {
                None
            };
            let row = PositionRow {
                game_id: id.to_string(),
                ply: ply as i64,
                cp: match eval {
                    Eval::Cp(cp) => Some(i64::from(cp)),
                    Eval::Mate(_) => None,
                },
                mate: match eval {
                    Eval::Mate(n) => Some(i64::from(n)),
                    Eval::Cp(_) => None,
                },
                best_uci: best.map(|mv| position_game.position().uci(mv)),
                best_san: best.map(|mv| position_game.position().san(mv)),
                loss: None,
                judgement: None,
            };
            inner
                .store
                .write_analysis(AnalysisWrite::Position { row, previous_move })
                .await?;
            evals.push((eval, best));
        }
        let average = |losses: &Vec<i32>| {
            (!losses.is_empty()).then(|| {
                let sum: i64 = losses.iter().map(|&l| i64::from(l)).sum();
                (sum as f64 / losses.len() as f64).round() as i64
            })
        };
        inner
            .store
            .write_analysis(AnalysisWrite::Status {
                game_id: id.to_string(),
                status: "done",
                error: None,
                finished_at: Some(now_ms()),
                acpl: [average(&losses[0]), average(&losses[1])],
            })
            .await?;
        tracing::info!(game = %id, positions = moves.len() + 1, "analysis done");
        Ok(())
    }

    /// One position's search on an analysis slot, run again whenever a
    /// game's search takes the thread back.
    async fn search(
        &self,
        game: Game,
    ) -> Result<(Eval, Option<rookery_engine::Move>), AnalysisError> {
        let nodes = self.inner.options.nodes_per_ply;
        let game = Arc::new(game);
        loop {
            let slot = self.inner.ai.analysis_slot().await;
            let stop = slot.stop_flag();
            let position = game.clone();
            let found = tokio::task::spawn_blocking(move || evaluate(&position, nodes, stop.get()))
                .await
                .map_err(AnalysisError::internal)?;
            let preempted = slot.was_preempted();
            drop(slot);
            match found {
                Some(found) if !preempted => return Ok(found),
                _ => tracing::debug!("analysis search preempted: run again"),
            }
        }
    }

    /// Stops every job (their searches too) and waits for them.
    pub async fn shutdown(&self) {
        self.inner.shutdown.send_replace(true);
        let mut tasks = std::mem::take(&mut *self.tasks());
        while tasks.join_next().await.is_some() {}
    }
}

fn side_index(side: Color) -> usize {
    match side {
        Color::White => 0,
        Color::Black => 1,
    }
}

/// The game after its first `ply` moves.
fn replay(game: &Game, ply: usize) -> Game {
    let mut replayed = Game::new(game.initial_position().clone());
    for &mv in &game.moves()[..ply] {
        // These moves were legal when played from this very start.
        if replayed.play(mv).is_err() {
            break;
        }
    }
    replayed
}

/// The position `ply` moves into the game (for readers of stored rows).
pub fn position_at(game: &Game, ply: usize) -> Position {
    replay(game, ply).position().clone()
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::AtomicBool;

    use super::*;

    #[test]
    fn judgements_follow_the_winning_chances() {
        assert_eq!(judge(30, 20, false), (10, None));
        assert_eq!(judge(30, -300, true), (0, None));
        assert_eq!(judge(0, -100, false), (100, Some("inaccuracy")));
        assert_eq!(judge(0, -150, false), (150, Some("mistake")));
        assert_eq!(judge(0, -300, false), (300, Some("blunder")));
        // The same 150 cp matter less when already winning by a lot.
        assert_eq!(judge(900, 750, false), (150, None));
        // Gaining never counts as a loss.
        assert_eq!(judge(-50, 200, false), (0, None));
    }

    #[test]
    fn capped_evaluations_by_side() {
        assert_eq!(
            Eval::Cp(2500).capped_for(Color::White, Color::White),
            CP_CAP
        );
        assert_eq!(Eval::Cp(120).capped_for(Color::Black, Color::White), -120);
        assert_eq!(
            Eval::Mate(-3).capped_for(Color::Black, Color::White),
            CP_CAP
        );
        // Checkmated with White to move: White lost.
        assert_eq!(
            Eval::Mate(0).capped_for(Color::White, Color::White),
            -CP_CAP
        );
        assert_eq!(Eval::Mate(0).capped_for(Color::White, Color::Black), CP_CAP);
    }

    #[test]
    fn evaluation_is_deterministic_and_sees_mates() {
        let stop = AtomicBool::new(false);
        let mut game = Game::default();
        for uci in ["f2f3", "e7e5", "g2g4"] {
            game.play_uci(uci).unwrap();
        }
        let first = evaluate(&game, 20_000, &stop).unwrap();
        let again = evaluate(&game, 20_000, &stop).unwrap();
        assert_eq!(first, again);
        assert_eq!(first.0, Eval::Mate(-1), "black mates in one");
        assert_eq!(first.1.map(|mv| mv.to_uci()).as_deref(), Some("d8h4"));
        game.play_uci("d8h4").unwrap();
        assert_eq!(
            evaluate(&game, 20_000, &stop).unwrap(),
            (Eval::Mate(0), None)
        );
    }
}

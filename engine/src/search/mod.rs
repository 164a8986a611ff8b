//! The search: which move is best, found by looking ahead.
//!
//! Iterative deepening runs a depth-limited search at depth 1, 2, 3, … until
//! a limit is reached. Each iteration is a negamax alpha-beta search with:
//!
//! - **Principal variation search**: the first move (the expected best) gets
//!   the full window; the others only a null window that merely proves them
//!   worse, and are searched again only if that proof fails.
//! - **Aspiration windows** at the root: the next iteration is first tried
//!   with a narrow window around the previous score, widened on failure.
//! - **Quiescence search** at the leaves: captures and promotions (minus
//!   those static exchange evaluation says lose material) are played out until
//!   the position is quiet, so the evaluation is never taken in mid-exchange.
//! - **Transposition table** ([`crate::tt`]), probed for cut-offs and for the
//!   move to try first.
//! - **Move ordering**: table move, winning captures (MVV-LVA, losing ones
//!   by SEE last), two killer moves per ply, then quiet moves by history:
//!   butterfly and **continuation history** (how well a move answered the
//!   previous move, and followed up our own move before it; see
//!   [`history`]).
//! - **Null-move pruning**, **late move reductions**, futility and late-move
//!   pruning near the leaves (of quiet moves that give no check: a check
//!   is pruned only when static exchange says it loses more than a capture
//!   may), a **check extension** and a **singular extension** (with
//!   multi-cut) for a table move nothing else comes near.
//!   Late-move pruning and the reductions are harsher, and reverse
//!   futility more careful, at a node whose static evaluation is not
//!   **improving** on the one at our previous move. Reverse futility,
//!   null move and futility judge the node by the **table's score**
//!   instead of the static evaluation where the entry's bound says the
//!   true score lies beyond it.
//! - **Draws** by repetition (against the game history too), by the
//!   fifty-move rule and by insufficient material are recognised inside the
//!   tree.
//!
//! The root can report several lines (**MultiPV**: the best move, then the
//! best of the rest, …), and one search can use several threads (**Lazy
//! SMP**: helpers search the same root at staggered depths and share only
//! the transposition table; see [`Searcher::set_threads`]).
//!
//! The static evaluation is the hand-written one ([`crate::eval`]) unless a
//! network is given ([`Searcher::set_network`]); each thread then keeps an
//! [`AccumulatorStack`] along its path, updated from the moves played.
//!
//! All state lives in a [`Searcher`] the caller owns: any number of searches
//! can run at once on different threads, each with its own `Searcher`.
//!
//! The concerns live in their own files, the way Stockfish splits its
//! search: this file holds the tree search itself; [`picker`] the move
//! ordering; [`history`] the statistics it learns from cut-offs;
//! [`handicap`] the lower levels' weighted random root choice;
//! [`limits`] and [`result`] what goes in and what comes out; [`time`] the
//! clock; `see` the static exchange evaluation.

mod handicap;
mod history;
mod limits;
mod picker;
mod result;
mod see;
pub mod time;

use arrayvec::ArrayVec;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::eval::{evaluate, SEE_VALUE};
use crate::moves::Move;
use crate::nnue::{AccumulatorStack, Change, Network};
use crate::position::Position;
use crate::tt::{Bound, TranspositionTable};
use crate::types::Role;
use history::{Histories, PieceTo};
use picker::MovePicker;
use time::{TimeBudget, Trend};

pub use handicap::Handicap;
pub use limits::{ClockBudget, Limits, Signals};
pub use result::{Info, PvLine, Score, SearchResult};

/// Deepest ply the search can reach (stack and table sizes).
pub const MAX_PLY: usize = 128;
/// The score of checkmating now; mate in `n` plies scores `MATE - n`.
pub const MATE: i32 = 32_000;
/// Scores beyond this are mates.
pub const MATE_BOUND: i32 = MATE - MAX_PLY as i32;
const INFINITY: i32 = MATE + 1;
const DRAW: i32 = 0;

/// Default transposition table size in MiB.
pub const DEFAULT_HASH_MB: usize = 16;

/// A network's evaluation is clamped to this many centipawns, well inside
/// the scores that mean mate and inside the table's `i16`.
const NETWORK_EVAL_LIMIT: i32 = 20_000;

/// Long-lived search state: the transposition table and the move-ordering
/// statistics that carry over from one move of a game to the next.
pub struct Searcher {
    tt: TranspositionTable,
    history: Box<Histories>,
    /// One history per helper thread (Lazy SMP, see [`Searcher::set_threads`]):
    /// each thread orders its own tree, so each learns its own.
    helper_history: Vec<Box<Histories>>,
    reductions: Box<[[u8; 64]; 64]>,
    /// The evaluation network, if the search uses one instead of the
    /// hand-written evaluation.
    network: Option<Arc<Network>>,
}

impl Default for Searcher {
    fn default() -> Searcher {
        Searcher::new(DEFAULT_HASH_MB)
    }
}

impl Searcher {
    /// A single-threaded searcher with a transposition table of `hash_mb`
    /// MiB.
    pub fn new(hash_mb: usize) -> Searcher {
        let mut reductions = Box::new([[0u8; 64]; 64]);
        for (depth, row) in reductions.iter_mut().enumerate().skip(1) {
            for (index, r) in row.iter_mut().enumerate().skip(1) {
                // Softer than the 0.75 + ln·ln / 2.25 of before 30 November:
                // level at 20,000 nodes a move, and the quiet follow-up
                // that makes a sacrifice work is seen plies sooner (Win At
                // Chess, `tools/calibration.md`, fourteenth session).
                let value = 0.5 + (depth as f64).ln() * (index as f64).ln() / 2.75;
                *r = value.max(0.0) as u8;
            }
        }
        Searcher {
            tt: TranspositionTable::new(hash_mb),
            history: Histories::new(),
            helper_history: Vec::new(),
            reductions,
            network: None,
        }
    }

    /// Evaluates with `network` from now on, or with the hand-written
    /// evaluation for `None` (the default). The table is cleared: the
    /// static evaluations it keeps are the old evaluation's.
    pub fn set_network(&mut self, network: Option<Arc<Network>>) {
        let same = match (&self.network, &network) {
            (Some(a), Some(b)) => Arc::ptr_eq(a, b),
            (None, None) => true,
            _ => false,
        };
        if !same {
            self.tt.clear();
            self.network = network;
        }
    }

    /// The network the search evaluates with, if any.
    pub fn network(&self) -> Option<&Arc<Network>> {
        self.network.as_ref()
    }

    /// Replaces the table with one of `hash_mb` MiB (UCI `Hash`).
    pub fn resize(&mut self, hash_mb: usize) {
        self.tt = TranspositionTable::new(hash_mb);
    }

    /// Searches on `threads` threads from now on (UCI `Threads`; at least
    /// one). Lazy SMP: the extra threads search the same root at staggered
    /// depths and share only the transposition table, where each finds
    /// cut-offs and move orders the others stored; the main thread decides
    /// when to stop and its result is the answer.
    ///
    /// A search with a node limit or a [`Handicap`] still runs on one
    /// thread: the levels' node budgets are calibrated so, and a node
    /// limit promises the same search on any machine, which threads racing
    /// for the table cannot keep.
    pub fn set_threads(&mut self, threads: usize) {
        self.helper_history
            .resize_with(threads.max(1) - 1, Histories::new);
    }

    /// The number of threads a search uses.
    pub fn threads(&self) -> usize {
        self.helper_history.len() + 1
    }

    /// Forgets everything learnt (UCI `ucinewgame`), so a new game does not
    /// depend on the previous one.
    pub fn clear(&mut self) {
        self.tt.clear();
        for history in std::iter::once(&mut self.history).chain(&mut self.helper_history) {
            history.clear();
        }
    }

    /// Searches `position` within `limits` until done or `stop` is raised.
    ///
    /// `history` holds the Zobrist hashes of the game's earlier positions,
    /// oldest first (a trailing copy of the current position's hash is
    /// ignored), so that repetitions of game positions count as draws.
    /// `on_info` hears about every finished iteration (one call per line
    /// with [`Limits::multipv`]).
    pub fn search(
        &mut self,
        position: &Position,
        history: &[u64],
        limits: &Limits,
        stop: &AtomicBool,
        on_info: impl FnMut(&Info),
    ) -> SearchResult {
        self.search_with(position, history, limits, Signals::stop(stop), on_info)
    }

    /// [`Searcher::search`] with every signal a host can send, pondering
    /// included.
    pub fn search_with(
        &mut self,
        position: &Position,
        history: &[u64],
        limits: &Limits,
        signals: Signals<'_>,
        mut on_info: impl FnMut(&Info),
    ) -> SearchResult {
        let start = Instant::now();
        self.tt.new_search();
        for history in std::iter::once(&mut self.history).chain(&mut self.helper_history) {
            history.age();
        }
        let mut path: Vec<u64> = history.to_vec();
        if path.last() == Some(&position.hash()) {
            path.pop();
        }
        let budget = TimeBudget::from_limits(limits).capped(limits.max_time);
        let helpers = if limits.handicap.is_some() || limits.nodes.is_some() {
            0
        } else {
            self.helper_history.len()
        };
        let done = AtomicBool::new(false);
        let node_counts: Vec<AtomicU64> = (0..=helpers).map(|_| AtomicU64::new(0)).collect();
        let shared = Shared {
            tt: &self.tt,
            network: self.network.as_deref(),
            reductions: &self.reductions,
            stop: signals.stop,
            done: &done,
            node_counts: &node_counts,
            start,
        };
        std::thread::scope(|scope| {
            for (index, history) in self.helper_history[..helpers].iter_mut().enumerate() {
                let mut helper = Worker::new(shared, history, index + 1, path.clone(), position);
                let spawned = std::thread::Builder::new()
                    .name(format!("search helper {}", index + 1))
                    .spawn_scoped(scope, move || helper.iterate_as_helper(position, limits));
                // A helper that cannot start only costs speed: the main
                // thread's search is complete on its own.
                if spawned.is_err() {
                    break;
                }
            }
            let mut main = Worker::new(shared, &mut self.history, 0, path, position);
            main.hard_limit = budget.hard;
            main.node_limit = limits.nodes;
            main.pondering = signals.pondering;
            let result = main.iterate(position, limits, budget.soft, &mut on_info);
            done.store(true, Ordering::Relaxed);
            result
        })
    }
}

/// What the threads of one search share.
#[derive(Clone, Copy)]
struct Shared<'a> {
    tt: &'a TranspositionTable,
    network: Option<&'a Network>,
    reductions: &'a [[u8; 64]; 64],
    stop: &'a AtomicBool,
    /// Raised by the main thread once it has its answer: the helpers end.
    done: &'a AtomicBool,
    /// Each thread's node count, published every 1024 nodes for the
    /// totals the main thread reports.
    node_counts: &'a [AtomicU64],
    start: Instant,
}

struct RootMove {
    mv: Move,
    /// Score of the last search of this move; `-INFINITY` when it was only
    /// shown to be worse than the best.
    score: i32,
    pv: Vec<Move>,
    /// Nodes spent below this move in the current iteration (time
    /// management reads how much of the effort went into the best move).
    nodes: u64,
}

/// The state of one thread of a running search.
struct Worker<'a> {
    tt: &'a TranspositionTable,
    history: &'a mut Histories,
    reductions: &'a [[u8; 64]; 64],
    stop: &'a AtomicBool,
    done: &'a AtomicBool,
    node_counts: &'a [AtomicU64],
    /// 0 for the main thread, 1, 2, … for the helpers.
    id: usize,
    /// When the search began (UCI `time`).
    start: Instant,
    /// When the clock began to run for this search: the start, or the
    /// `ponderhit` of a pondering search. Time limits count from here.
    clock_start: Instant,
    /// Raised while the search ponders (thinks on the opponent's time, no
    /// time limit); lowered at `ponderhit`. `None` once the clock runs.
    pondering: Option<&'a AtomicBool>,
    hard_limit: Option<Duration>,
    node_limit: Option<u64>,
    nodes: u64,
    seldepth: usize,
    stopped: bool,
    /// Hashes of the positions before the current node: game history, then
    /// the path from the root.
    path: Vec<u64>,
    killers: [[Move; 2]; MAX_PLY + 2],
    /// `played[ply]`: the piece and destination of the move the path
    /// plays at `ply` (the continuation history's index).
    played: [PieceTo; MAX_PLY + 2],
    /// `evals[ply]`: the static evaluation of the path's node at `ply`,
    /// `-INFINITY` when in check (there is none then).
    evals: [i32; MAX_PLY + 2],
    /// `excluded[ply]`: the move a singular-extension search at `ply`
    /// leaves out (`Move::NONE` in a normal search).
    excluded: [Move; MAX_PLY + 2],
    pv: Vec<[Move; MAX_PLY + 1]>,
    pv_len: [usize; MAX_PLY + 1],
    root_moves: Vec<RootMove>,
    /// The network and this thread's accumulators along its path, when
    /// the search evaluates with a network.
    nnue: Option<(&'a Network, AccumulatorStack)>,
}

/// Lazy SMP's variety: helper `id` (1, 2, …) skips some depths of its
/// iterative deepening, in Stockfish 9's pattern (helper 1 searches the
/// even depths, helper 2 the odd ones, helpers 3 to 6 two depths out of
/// four, …), so that the threads spread over neighbouring depths instead
/// of searching the same tree in step.
fn helper_skips(id: usize, depth: i32) -> bool {
    const SKIP_SIZE: [i32; 20] = [1, 1, 2, 2, 2, 2, 3, 3, 3, 3, 3, 3, 4, 4, 4, 4, 4, 4, 4, 4];
    const SKIP_PHASE: [i32; 20] = [0, 1, 0, 1, 2, 3, 0, 1, 2, 3, 4, 5, 0, 1, 2, 3, 4, 5, 6, 7];
    let i = (id - 1) % 20;
    ((depth + SKIP_PHASE[i]) / SKIP_SIZE[i]) % 2 == 1
}

impl<'a> Worker<'a> {
    fn new(
        shared: Shared<'a>,
        history: &'a mut Histories,
        id: usize,
        path: Vec<u64>,
        root: &Position,
    ) -> Worker<'a> {
        let nnue = shared.network.map(|network| {
            let mut stack = AccumulatorStack::new(network, MAX_PLY + 2);
            stack.set_root(network, root);
            (network, stack)
        });
        Worker {
            tt: shared.tt,
            history,
            reductions: shared.reductions,
            stop: shared.stop,
            done: shared.done,
            node_counts: shared.node_counts,
            id,
            start: shared.start,
            clock_start: shared.start,
            pondering: None,
            hard_limit: None,
            node_limit: None,
            nodes: 0,
            seldepth: 0,
            stopped: false,
            path,
            killers: [[Move::NONE; 2]; MAX_PLY + 2],
            played: [PieceTo::NONE; MAX_PLY + 2],
            evals: [-INFINITY; MAX_PLY + 2],
            excluded: [Move::NONE; MAX_PLY + 2],
            pv: vec![[Move::NONE; MAX_PLY + 1]; MAX_PLY + 1],
            pv_len: [0; MAX_PLY + 1],
            root_moves: Vec::new(),
            nnue,
        }
    }
}

impl Worker<'_> {
    /// Orders the root moves for the first iteration: the table move, then
    /// as interior nodes would.
    fn init_root_moves(&mut self, root: &Position, moves: &[Move]) {
        let tt_move = self.tt.probe(root.hash(), 0).map_or(Move::NONE, |h| h.mv);
        let mut scored: Vec<(i32, Move)> = moves
            .iter()
            .map(|&mv| (self.order_score(root, mv, tt_move, 0), mv))
            .collect();
        scored.sort_by_key(|&(score, _)| std::cmp::Reverse(score));
        self.root_moves = scored
            .into_iter()
            .map(|(_, mv)| RootMove {
                mv,
                score: -INFINITY,
                pv: vec![mv],
                nodes: 0,
            })
            .collect();
    }

    /// Nodes of every thread of the search, as last published.
    fn total_nodes(&self) -> u64 {
        let others: u64 = (self.node_counts.iter().enumerate())
            .filter(|&(id, _)| id != self.id)
            .map(|(_, count)| count.load(Ordering::Relaxed))
            .sum();
        self.nodes + others
    }

    /// Is the search still pondering? Notices `ponderhit` and starts the
    /// clock then.
    fn is_pondering(&mut self) -> bool {
        match self.pondering {
            Some(flag) if flag.load(Ordering::Acquire) => true,
            Some(_) => {
                self.pondering = None;
                self.clock_start = Instant::now();
                false
            }
            None => false,
        }
    }

    fn max_depth(limits: &Limits) -> i32 {
        limits
            .depth
            .unwrap_or(MAX_PLY as u32 - 8)
            .clamp(1, MAX_PLY as u32 - 8) as i32
    }

    /// A helper thread's search: iterative deepening over its share of the
    /// depths (see [`helper_skips`]), until the main thread is done. What it
    /// finds reaches the main thread through the table only.
    fn iterate_as_helper(&mut self, root: &Position, limits: &Limits) {
        let moves = root.legal_moves();
        if moves.is_empty() {
            return;
        }
        self.init_root_moves(root, &moves);
        let mut score = 0;
        for depth in 1..=Self::max_depth(limits) {
            if helper_skips(self.id, depth) {
                continue;
            }
            self.seldepth = 0;
            let iteration_score = self.aspiration(root, depth, score, 0);
            if self.stopped {
                break;
            }
            score = iteration_score;
        }
    }

    /// The main thread's search: iterative deepening until a limit says
    /// stop, one `on_info` per finished iteration and line.
    fn iterate(
        &mut self,
        root: &Position,
        limits: &Limits,
        soft_limit: Option<Duration>,
        on_info: &mut impl FnMut(&Info),
    ) -> SearchResult {
        let moves = root.legal_moves();
        let mut result = SearchResult {
            best_move: moves.first().copied(),
            score: Score::Cp(0),
            depth: 0,
            nodes: 0,
            pv: moves.first().copied().into_iter().collect(),
            lines: Vec::new(),
        };
        if moves.is_empty() {
            result.score = if root.is_check() {
                Score::Mate(0)
            } else {
                Score::Cp(0)
            };
            return result;
        }
        self.init_root_moves(root, &moves);

        let handicap = limits.handicap.filter(|h| h.temperature_cp > 0);
        // A handicapped search keeps part of its node budget for scoring
        // every root move at the end (see `score_root_moves`).
        if handicap.is_some() {
            self.node_limit = limits.nodes.map(|n| n * 7 / 10);
        }
        let multipv = limits.multipv.clamp(1, self.root_moves.len());
        // Each line's score in the last iteration: the next iteration's
        // aspiration window is centred on it.
        let mut line_scores = vec![0; multipv];
        let mut trend = Trend::new(self.root_moves.len());
        for depth in 1..=Self::max_depth(limits) {
            self.seldepth = 0;
            for m in &mut self.root_moves {
                m.nodes = 0;
            }
            let mut lines_done = 0;
            for (line, line_score) in line_scores.iter_mut().enumerate() {
                let score = self.aspiration(root, depth, *line_score, line);
                if self.stopped {
                    break;
                }
                *line_score = score;
                lines_done += 1;
            }
            // A stopped iteration still counts if it proved a new best move.
            if self.stopped && self.root_moves[0].score == -INFINITY {
                break;
            }
            if self.stopped {
                line_scores[0] = self.root_moves[0].score;
            } else if multipv > 1 {
                // The lines were searched best first, but a later line can
                // come out above an earlier one (each is a separate search
                // with its own window): report them in score order.
                self.root_moves[..multipv].sort_by_key(|m| std::cmp::Reverse(m.score));
                for (line_score, m) in line_scores.iter_mut().zip(&self.root_moves) {
                    *line_score = m.score;
                }
            }
            let score = line_scores[0];
            let best = &self.root_moves[0];
            result.best_move = Some(best.mv);
            result.pv = best.pv.clone();
            result.score = Score::from_internal(score);
            result.depth = depth as u32;
            result.nodes = self.total_nodes();
            result.lines = self.root_moves[..lines_done.max(1)]
                .iter()
                .map(|m| PvLine {
                    score: Score::from_internal(m.score),
                    pv: m.pv.clone(),
                })
                .collect();
            for (index, line) in result.lines.iter().enumerate() {
                on_info(&Info {
                    depth: depth as u32,
                    seldepth: self.seldepth.max(depth as usize) as u32,
                    multipv: index as u32 + 1,
                    score: line.score,
                    nodes: result.nodes,
                    time: self.start.elapsed(),
                    hashfull: self.tt.hashfull(),
                    pv: line.pv.clone(),
                });
            }
            if self.stopped {
                break;
            }
            // A found mate will not get better with more depth.
            if !limits.infinite && score.abs() >= MATE_BOUND && depth > (MATE - score.abs()) + 2 {
                break;
            }
            if let Some(soft) = soft_limit {
                let root_nodes: u64 = self.root_moves.iter().map(|m| m.nodes).sum();
                let best_share = self.root_moves[0].nodes as f64 / root_nodes.max(1) as f64;
                trend.record(self.root_moves[0].mv, score, best_share);
                if !self.is_pondering() && self.clock_start.elapsed() >= soft.mul_f64(trend.scale())
                {
                    break;
                }
            }
        }
        if let Some(h) = handicap {
            if self.score_root_moves(root, &result, limits, line_scores[0], h) {
                if let Some(mv) = self.pick_with_temperature(h) {
                    if Some(mv) != result.best_move {
                        result.best_move = Some(mv);
                        result.pv = vec![mv];
                    }
                }
            }
        }
        result.nodes = self.total_nodes();
        result
    }

    /// Searches line `line` of the root (the best of the moves from index
    /// `line` on) with a narrow window around the last score first.
    fn aspiration(&mut self, root: &Position, depth: i32, previous: i32, line: usize) -> i32 {
        let mut delta = 25;
        let (mut alpha, mut beta) = if depth >= 4 && previous.abs() < MATE_BOUND {
            (previous - delta, previous + delta)
        } else {
            (-INFINITY, INFINITY)
        };
        loop {
            let score = self.search_root(root, depth, alpha, beta, line);
            if self.stopped {
                return score;
            }
            if score <= alpha {
                beta = (alpha + beta) / 2;
                alpha = (score - delta).max(-INFINITY);
            } else if score >= beta {
                beta = (score + delta).min(INFINITY);
            } else {
                return score;
            }
            delta += delta;
            if delta > 1000 {
                alpha = -INFINITY;
                beta = INFINITY;
            }
        }
    }

    /// One root iteration with PVS over the root moves from index `line`
    /// on (the earlier ones are the better lines of a MultiPV search,
    /// already found). The best of them moves to index `line`; the others
    /// keep their order (the sort is stable).
    fn search_root(
        &mut self,
        root: &Position,
        depth: i32,
        mut alpha: i32,
        beta: i32,
        line: usize,
    ) -> i32 {
        let mut best = -INFINITY;
        self.evals[0] = if root.is_check() {
            -INFINITY
        } else {
            self.evaluate(root, 0)
        };
        self.path.push(root.hash());
        for i in line..self.root_moves.len() {
            let mv = self.root_moves[i].mv;
            let nodes_before = self.nodes;
            let child = self.play_child(root, mv, 0);
            let score = if i == line {
                -self.negamax(&child, depth - 1, -beta, -alpha, 1, true)
            } else {
                let s = -self.negamax(&child, depth - 1, -alpha - 1, -alpha, 1, false);
                if s > alpha && s < beta && !self.stopped {
                    -self.negamax(&child, depth - 1, -beta, -alpha, 1, true)
                } else {
                    s
                }
            };
            self.root_moves[i].nodes += self.nodes - nodes_before;
            if self.stopped {
                break;
            }
            let entry = &mut self.root_moves[i];
            if i == line || score > alpha {
                entry.score = score;
                let mut pv = vec![mv];
                pv.extend_from_slice(&self.pv[1][..self.pv_len[1]]);
                entry.pv = pv;
            } else {
                entry.score = -INFINITY;
            }
            if score > best {
                best = score;
                if score > alpha {
                    alpha = score;
                    let found = self.root_moves.remove(i);
                    self.root_moves.insert(line, found);
                    if alpha >= beta {
                        break;
                    }
                }
            }
        }
        self.path.pop();
        best
    }

    /// The static evaluation of `pos`, the position at `ply` of the path:
    /// the network's when the search has one, else the hand-written one.
    #[inline]
    fn evaluate(&mut self, pos: &Position, ply: usize) -> i32 {
        match &mut self.nnue {
            Some((network, stack)) => {
                let value = stack.evaluate(network, ply, pos);
                // The incremental accumulators against a refresh, at every
                // evaluation of every search the tests run.
                debug_assert_eq!(value, network.evaluate_position(pos), "ply {ply}: {pos:?}");
                value.clamp(-NETWORK_EVAL_LIMIT, NETWORK_EVAL_LIMIT)
            }
            None => evaluate(pos),
        }
    }

    /// The position after `mv` (legal in `pos`, the path's node at `ply`),
    /// counted as a node, with the path's move and accumulators brought up
    /// to date for it. Its table entry is asked for first, so that memory
    /// is read while the accumulators are updated.
    #[inline]
    fn play_child(&mut self, pos: &Position, mv: Move, ply: usize) -> Position {
        self.played[ply] = PieceTo::of(pos, mv);
        let mut child = pos.clone();
        child.play_unchecked(mv);
        self.tt.prefetch(child.hash());
        self.track_move(ply + 1, pos, mv);
        self.nodes += 1;
        child
    }

    /// Notes that the position at `ply` is the one at `ply − 1` with `mv`
    /// played (for the network's accumulators; nothing without one).
    #[inline]
    fn track_move(&mut self, ply: usize, parent: &Position, mv: Move) {
        if self.nnue.is_some() {
            self.track(ply, Change::of_move(parent, mv));
        }
    }

    #[inline]
    fn track(&mut self, ply: usize, change: Change) {
        if let Some((_, stack)) = &mut self.nnue {
            stack.push(ply, change);
        }
    }

    /// Checks the stop signals, the node limit and the clock.
    #[inline]
    fn check_limits(&mut self) {
        if let Some(limit) = self.node_limit {
            if self.nodes >= limit {
                self.stopped = true;
            }
        }
        // The flags and the clock are dearer to read: every 1024 nodes,
        // about a millisecond.
        if self.nodes & 1023 != 0 {
            return;
        }
        if self.stop.load(Ordering::Relaxed) || self.done.load(Ordering::Relaxed) {
            self.stopped = true;
        }
        self.node_counts[self.id].store(self.nodes, Ordering::Relaxed);
        if let Some(hard) = self.hard_limit {
            if !self.is_pondering() && self.clock_start.elapsed() >= hard {
                self.stopped = true;
            }
        }
    }

    /// Has the current position occurred before, since the last capture or
    /// pawn move? One earlier occurrence is enough to score a draw: if
    /// repeating was good once it will be good again, and the opponent can
    /// always repeat too.
    fn is_repetition(&self, pos: &Position) -> bool {
        let hash = pos.hash();
        let n = self.path.len();
        let reach = (pos.halfmove_clock() as usize).min(n);
        // `path[n - k]` is the position `k` plies back. Only even `k` have
        // the same side to move, and a position cannot recur in 2 plies.
        (4..=reach).step_by(2).any(|k| self.path[n - k] == hash)
    }

    #[allow(clippy::too_many_arguments)]
    fn negamax(
        &mut self,
        pos: &Position,
        mut depth: i32,
        mut alpha: i32,
        mut beta: i32,
        ply: usize,
        pv_node: bool,
    ) -> i32 {
        self.pv_len[ply] = 0;
        let in_check = pos.is_check();
        // Check extension: a forcing line is searched one ply deeper, so
        // that mates and perpetuals are not pushed past the horizon.
        if in_check {
            depth += 1;
        }
        if depth <= 0 {
            return self.quiescence(pos, alpha, beta, ply);
        }
        self.check_limits();
        if self.stopped {
            return 0;
        }
        self.seldepth = self.seldepth.max(ply);
        if ply >= MAX_PLY - 2 {
            return self.evaluate(pos, ply);
        }
        if self.is_repetition(pos) || pos.is_insufficient_material() {
            return DRAW;
        }
        if pos.halfmove_clock() >= 100 && (!in_check || pos.has_legal_moves()) {
            return DRAW;
        }
        // Mate distance pruning: no line from here can beat a mate already
        // found closer to the root.
        alpha = alpha.max(-MATE + ply as i32);
        beta = beta.min(MATE - ply as i32 - 1);
        if alpha >= beta {
            return alpha;
        }

        // A search that leaves out the table move (see the singular
        // extension below) shares the node's table entry only for its
        // static evaluation: its result is not the node's.
        let excluded = self.excluded[ply];
        let hit = self.tt.probe(pos.hash(), ply);
        let tt_move = if excluded.is_none() {
            hit.map_or(Move::NONE, |h| h.mv)
        } else {
            Move::NONE
        };
        if let Some(h) = hit {
            if !pv_node && excluded.is_none() && h.depth >= depth && h.cuts_off(alpha, beta) {
                return h.score;
            }
        }

        let static_eval = if in_check {
            -INFINITY
        } else {
            match hit {
                Some(h) => h.eval,
                None => self.evaluate(pos, ply),
            }
        };

        // Is the static evaluation better than at our previous move (two
        // plies up, or four if we were in check there)? A node that is not
        // improving is less likely to reach beta with a quiet move, so it
        // prunes and reduces more; one that is improving is trusted to
        // fail high a little sooner.
        self.evals[ply] = static_eval;
        let improving = !in_check
            && [2, 4]
                .into_iter()
                .filter_map(|back| ply.checked_sub(back))
                .map(|p| self.evals[p])
                .find(|&e| e != -INFINITY)
                .is_none_or(|e| static_eval > e);

        // The evaluation the pruning below trusts: the table's score where
        // its bound says the true score lies beyond the static evaluation
        // (a searched score is the better guess), else the static one.
        let eval = match hit {
            Some(h) if !in_check && h.score.abs() < MATE_BOUND && h.refines(static_eval) => h.score,
            _ => static_eval,
        };

        if !pv_node && !in_check && excluded.is_none() {
            // Reverse futility: far enough above beta that a shallow search
            // will not bring the score back down (a wider margin while the
            // position is getting worse).
            let margin = 85 * (depth - improving as i32);
            if depth <= 6 && eval - margin >= beta && beta.abs() < MATE_BOUND {
                return eval;
            }
            // Null move: if passing still leaves us above beta, a real move
            // almost surely does too (false in zugzwang, hence the material
            // condition). The reduced search proves it cheaply.
            if depth >= 3
                && eval >= beta
                && pos.has_non_pawn_material()
                && self.path.last() != Some(&0)
            {
                // A deep null move hides the threat a quiet move makes:
                // 3 + depth / 4 + up to 3 (before 30 November) found Win At
                // Chess's sacrifices plies later than this does, for no
                // gain at fixed nodes.
                let r = 3 + depth / 5 + ((eval - beta) / 200).min(2);
                let child = pos.null_move();
                self.tt.prefetch(child.hash());
                self.played[ply] = PieceTo::NONE;
                self.track(ply + 1, Change::NONE);
                // A zero in the path marks the null move, so that two are
                // never played in a row.
                self.path.push(0);
                let score = -self.negamax(&child, depth - 1 - r, -beta, -beta + 1, ply + 1, false);
                self.path.pop();
                if self.stopped {
                    return 0;
                }
                if score >= beta {
                    return if score >= MATE_BOUND { beta } else { score };
                }
            }
        }

        // Internal iterative reduction: without a table move this node was
        // never searched before, so a cheaper look first is wiser.
        if tt_move.is_none() && excluded.is_none() && depth >= 4 {
            depth -= 1;
        }

        // Singular extension: when the table move is much better than every
        // other move (a search without it, at half depth, fails low well
        // below the table's score), the node hangs on that one move, so it
        // is searched a ply deeper. If even without it the node clears beta
        // (several moves do), the node fails high at once (multi-cut).
        let mut singular_extension = 0;
        if let Some(h) = hit.filter(|h| {
            ply > 0
                && depth >= 6
                && !tt_move.is_none()
                && h.depth >= depth - 3
                && h.bound != Bound::Upper
                && h.score.abs() < MATE_BOUND
        }) {
            let singular_beta = h.score - 2 * depth;
            self.excluded[ply] = tt_move;
            let score = self.negamax(
                pos,
                (depth - 1) / 2,
                singular_beta - 1,
                singular_beta,
                ply,
                false,
            );
            self.excluded[ply] = Move::NONE;
            if self.stopped {
                return 0;
            }
            if score < singular_beta {
                singular_extension = 1;
            } else if singular_beta >= beta {
                return singular_beta;
            }
        }

        let mut moves = pos.legal_moves();
        if moves.is_empty() {
            return if in_check { -MATE + ply as i32 } else { DRAW };
        }
        let mut picker = MovePicker::new(&mut moves, |mv| self.order_score(pos, mv, tt_move, ply));

        let us = pos.turn();
        let original_alpha = alpha;
        let mut best = -INFINITY;
        let mut best_move = Move::NONE;
        let mut quiets_tried: ArrayVec<Move, 256> = ArrayVec::new();
        let mut searched = 0usize;
        self.path.push(pos.hash());

        while let Some((mv, order)) = picker.next() {
            if mv == excluded {
                continue;
            }
            let is_quiet =
                mv.promotion().is_none() && !mv.is_en_passant() && pos.role_at(mv.to()).is_none();
            let is_killer = is_quiet && self.killers[ply].contains(&mv);

            // Only the pruning and the reductions below ask, and neither of
            // the first move searched: most nodes stop after it.
            let gives_check = searched > 0 && pos.gives_check(mv);
            // Pruning of hopeless moves near the leaves, never while a mate
            // against us is all we have found (there we need every move).
            // A check is pruned only as a capture is, when it loses
            // material: the forcing moves tactics are made of.
            if !pv_node && !in_check && searched > 0 && best > -MATE_BOUND {
                if is_quiet && !gives_check {
                    // Late move pruning: after many quiet moves, the rest
                    // (ordered worst) are very unlikely to matter.
                    if depth <= 4
                        && quiets_tried.len() as i32 >= (3 + depth * depth) / (2 - improving as i32)
                    {
                        continue;
                    }
                    // Futility: even a generous positional gain cannot lift
                    // the score to alpha.
                    if depth <= 3 && eval + 100 + 110 * depth <= alpha {
                        continue;
                    }
                    if depth <= 3 && pos.see(mv) < -60 * depth {
                        continue;
                    }
                } else if depth <= 4 && (order < 0 || gives_check) && pos.see(mv) < -110 * depth {
                    continue;
                }
            }

            let child = self.play_child(pos, mv, ply);

            let score = if searched == 0 {
                let extension = if mv == tt_move { singular_extension } else { 0 };
                -self.negamax(
                    &child,
                    depth - 1 + extension,
                    -beta,
                    -alpha,
                    ply + 1,
                    pv_node,
                )
            } else {
                // Late move reductions: moves ordered late are probably
                // bad; look at them shallower and only search them fully if
                // they surprise us.
                let mut reduction = 0;
                if depth >= 3 && searched >= 2 && is_quiet && !in_check && !gives_check {
                    reduction = self.reductions[depth.min(63) as usize][searched.min(63)] as i32;
                    if pv_node {
                        reduction -= 1;
                    }
                    if is_killer {
                        reduction -= 1;
                    }
                    if !improving {
                        reduction += 1;
                    }
                    let history =
                        self.history
                            .quiet_score(us, mv, self.earlier(ply), self.played[ply]);
                    reduction -= history / 8000;
                    reduction = reduction.clamp(0, depth - 2);
                }
                let mut s = -self.negamax(
                    &child,
                    depth - 1 - reduction,
                    -alpha - 1,
                    -alpha,
                    ply + 1,
                    false,
                );
                if s > alpha && reduction > 0 && !self.stopped {
                    s = -self.negamax(&child, depth - 1, -alpha - 1, -alpha, ply + 1, false);
                }
                if s > alpha && s < beta && pv_node && !self.stopped {
                    s = -self.negamax(&child, depth - 1, -beta, -alpha, ply + 1, true);
                }
                s
            };
            searched += 1;
            if self.stopped {
                self.path.pop();
                return 0;
            }

            if score > best {
                best = score;
                best_move = mv;
                if score > alpha {
                    alpha = score;
                    if pv_node {
                        self.pv[ply][0] = mv;
                        let child_len = self.pv_len[ply + 1];
                        let (head, tail) = self.pv.split_at_mut(ply + 1);
                        head[ply][1..=child_len].copy_from_slice(&tail[0][..child_len]);
                        self.pv_len[ply] = child_len + 1;
                    }
                    if alpha >= beta {
                        if is_quiet {
                            self.reward_quiet(pos, mv, &quiets_tried, depth, ply);
                        }
                        break;
                    }
                }
            }
            if is_quiet {
                quiets_tried.push(mv);
            }
        }
        self.path.pop();
        if !excluded.is_none() {
            // Only the excluded move was legal: nothing else reaches alpha.
            return if searched == 0 { alpha } else { best };
        }

        let bound = if best >= beta {
            Bound::Lower
        } else if best > original_alpha {
            Bound::Exact
        } else {
            Bound::Upper
        };
        let stored_eval = if in_check { 0 } else { static_eval };
        self.tt
            .store(pos.hash(), ply, best_move, best, stored_eval, depth, bound);
        best
    }

    /// A quiet move caused a cut-off: remember it as a killer for this ply
    /// and raise its history, lowering that of the quiet moves tried before
    /// it (they were ordered earlier and failed).
    fn reward_quiet(&mut self, pos: &Position, mv: Move, tried: &[Move], depth: i32, ply: usize) {
        if self.killers[ply][0] != mv {
            self.killers[ply][1] = self.killers[ply][0];
            self.killers[ply][0] = mv;
        }
        let bonus = (depth * depth * 8).min(1200);
        let us = pos.turn();
        let earlier = self.earlier(ply);
        self.history
            .update(us, mv, earlier, PieceTo::of(pos, mv), bonus);
        for &other in tried {
            self.history
                .update(us, other, earlier, PieceTo::of(pos, other), -bonus);
        }
    }

    /// The moves before the node at `ply`: the previous ply's, then the
    /// one before (none before the root).
    #[inline]
    fn earlier(&self, ply: usize) -> [PieceTo; 2] {
        let at = |back: usize| {
            ply.checked_sub(back)
                .map_or(PieceTo::NONE, |p| self.played[p])
        };
        [at(1), at(2)]
    }

    /// Searches only captures and promotions until the position is quiet.
    /// The side to move may "stand pat" on the static evaluation instead of
    /// capturing, as it is never forced to (unless in check: then every
    /// evasion is searched, and having none is mate).
    fn quiescence(&mut self, pos: &Position, mut alpha: i32, beta: i32, ply: usize) -> i32 {
        self.check_limits();
        if self.stopped {
            return 0;
        }
        self.seldepth = self.seldepth.max(ply);
        if ply >= MAX_PLY - 2 {
            return self.evaluate(pos, ply);
        }
        let in_check = pos.is_check();
        let hit = self.tt.probe(pos.hash(), ply);
        // Every entry is at least as deep as quiescence (depth 0).
        if let Some(h) = hit {
            if h.cuts_off(alpha, beta) {
                return h.score;
            }
        }

        let stand_pat = if in_check {
            -INFINITY
        } else {
            let eval = match hit {
                Some(h) => h.eval,
                None => self.evaluate(pos, ply),
            };
            if eval >= beta {
                return eval;
            }
            alpha = alpha.max(eval);
            eval
        };

        let mut moves = if in_check {
            pos.legal_moves()
        } else {
            pos.legal_captures()
        };
        if moves.is_empty() {
            return if in_check {
                -MATE + ply as i32
            } else {
                stand_pat
            };
        }
        let mut picker = MovePicker::new(&mut moves, |mv| {
            self.order_score(pos, mv, Move::NONE, ply.min(MAX_PLY))
        });

        let mut best = stand_pat;
        let mut best_move = Move::NONE;
        while let Some((mv, order)) = picker.next() {
            if !in_check {
                if mv.promotion().is_some_and(|r| r != Role::Queen) {
                    continue;
                }
                // Losing captures cannot raise a stand-pat score.
                if order < 0 {
                    continue;
                }
                // Delta pruning: even winning the victim outright falls
                // short of alpha by more than a positional margin.
                let victim = if mv.is_en_passant() {
                    SEE_VALUE[Role::Pawn.index()]
                } else {
                    pos.role_at(mv.to()).map_or(0, |r| SEE_VALUE[r.index()])
                };
                if mv.promotion().is_none() && stand_pat + victim + 200 <= alpha {
                    continue;
                }
            }
            let child = self.play_child(pos, mv, ply);
            let score = -self.quiescence(&child, -beta, -alpha, ply + 1);
            if self.stopped {
                return 0;
            }
            if score > best {
                best = score;
                best_move = mv;
                if score > alpha {
                    alpha = score;
                    if alpha >= beta {
                        break;
                    }
                }
            }
        }
        let bound = if best >= beta {
            Bound::Lower
        } else {
            Bound::Upper
        };
        let stored_eval = if in_check { 0 } else { stand_pat };
        self.tt
            .store(pos.hash(), ply, best_move, best, stored_eval, 0, bound);
        best
    }
}

//! The level handicap: deliberate, human-looking weakness for the lower
//! difficulty levels.
//!
//! After the normal search, every root move is scored (a ply shallower) and
//! one is drawn at random with weight `exp((score - best) / temperature)`:
//! close alternatives often, a lost piece rarely. The random numbers come
//! from a seeded [`SplitMix64`], so a given seed replays the same game.

use std::sync::atomic::Ordering;

use super::{SearchResult, Worker, INFINITY};
use crate::moves::Move;
use crate::position::Position;
use crate::rng::SplitMix64;

use super::limits::Limits;

/// Deliberate weakness for the lower difficulty levels: instead of the best
/// move, pick among all root moves at random, weighting each by
/// `exp((score - best) / temperature)`. Small temperatures almost always
/// play the best move; large ones often play a worse one, more rarely the
/// worse it is, which is how people err.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Handicap {
    pub temperature_cp: u32,
    /// Seeds the random choice, so a given seed replays the same game.
    pub seed: u64,
}

impl Worker<'_> {
    /// For [`Handicap`]: after the normal search, scores every root move
    /// exactly (within a margin below the best) one ply shallower than the
    /// normal search reached, for the weighted random choice. The best
    /// move keeps its deeper score. Returns false if there was no time or
    /// budget left to do it (then the best move is played).
    pub(super) fn score_root_moves(
        &mut self,
        root: &Position,
        result: &SearchResult,
        limits: &Limits,
        best_score: i32,
        handicap: Handicap,
    ) -> bool {
        let out_of_time = self
            .hard_limit
            .is_some_and(|hard| self.clock_start.elapsed() >= hard);
        if result.depth == 0 || self.stop.load(Ordering::Relaxed) || out_of_time {
            return false;
        }
        // Only the main phase's share of the node budget stopped us.
        self.stopped = false;
        self.node_limit = limits.nodes;
        for m in &mut self.root_moves {
            m.score = -INFINITY;
        }
        let depth = (result.depth as i32 - 1).max(1);
        self.search_root_all(root, depth, handicap.temperature_cp);
        if let Some(best) = self
            .root_moves
            .iter_mut()
            .find(|m| Some(m.mv) == result.best_move)
        {
            best.score = best_score;
        }
        true
    }

    /// One root iteration that scores every move exactly (within a margin
    /// below the best), for [`Handicap`]'s weighted choice.
    fn search_root_all(&mut self, root: &Position, depth: i32, temperature: u32) -> i32 {
        let margin = (temperature as i32 * 4).clamp(50, 2000);
        let mut best = -INFINITY;
        self.path.push(root.hash());
        for i in 0..self.root_moves.len() {
            let mv = self.root_moves[i].mv;
            self.track_move(1, root, mv);
            let mut child = root.clone();
            child.play_unchecked(mv);
            self.nodes += 1;
            let floor = if best == -INFINITY {
                -INFINITY
            } else {
                best - margin
            };
            let score = -self.negamax(&child, depth - 1, -INFINITY, -floor, 1, true);
            if self.stopped {
                break;
            }
            let entry = &mut self.root_moves[i];
            entry.score = if score > floor { score } else { -INFINITY };
            entry.pv = vec![mv];
            entry.pv.extend_from_slice(&self.pv[1][..self.pv_len[1]]);
            best = best.max(score);
        }
        self.path.pop();
        if !self.stopped {
            self.root_moves.sort_by_key(|m| std::cmp::Reverse(m.score));
        }
        best
    }

    /// Softmax choice over the root moves' scores.
    pub(super) fn pick_with_temperature(&self, handicap: Handicap) -> Option<Move> {
        let best = self.root_moves.iter().map(|m| m.score).max()?;
        if best == -INFINITY {
            return None;
        }
        let t = handicap.temperature_cp.max(1) as f64;
        let weights: Vec<f64> = self
            .root_moves
            .iter()
            .map(|m| {
                if m.score == -INFINITY {
                    0.0
                } else {
                    ((m.score - best) as f64 / t).exp()
                }
            })
            .collect();
        let total: f64 = weights.iter().sum();
        let mut rng = SplitMix64::new(handicap.seed);
        let mut x = rng.next_f64() * total;
        for (m, w) in self.root_moves.iter().zip(&weights) {
            if x < *w {
                return Some(m.mv);
            }
            x -= w;
        }
        Some(self.root_moves[0].mv)
    }
}

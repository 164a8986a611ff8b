//! Move picking: the order in which a node tries its moves.
//!
//! Alpha-beta prunes the most when the best move comes first, so each move
//! gets a guess of its worth before the search: the table move, then
//! captures that static exchange evaluation says do not lose material (most
//! valuable victim first, least valuable attacker first among equals), then
//! the two killer moves of this ply (quiet moves that caused a cut-off in a
//! sibling), then the other quiet moves by their history (butterfly plus
//! continuation, see [`super::history`]), and last the
//! losing captures and under-promotions.

use arrayvec::ArrayVec;

use super::history::PieceTo;
use super::Worker;
use crate::eval::SEE_VALUE;
use crate::movegen::MoveList;
use crate::moves::Move;
use crate::position::Position;
use crate::types::Role;

/// Hands out a node's moves best guess first.
pub(super) struct MovePicker<'a> {
    /// Borrowed: moved in, the list (512 bytes) was copied at every node.
    moves: &'a mut MoveList,
    scores: ArrayVec<i32, 256>,
    next: usize,
}

impl<'a> MovePicker<'a> {
    /// `order` gives each move its guessed worth (higher goes first).
    pub(super) fn new(moves: &'a mut MoveList, order: impl Fn(Move) -> i32) -> MovePicker<'a> {
        let scores = moves.iter().map(|&mv| order(mv)).collect();
        MovePicker {
            moves,
            scores,
            next: 0,
        }
    }

    /// The best remaining move and its ordering score. Selection sort: most
    /// nodes cut off after one or two moves, so sorting everything up front
    /// would be waste. Among equal scores the earlier generated move wins.
    pub(super) fn next(&mut self) -> Option<(Move, i32)> {
        let index = self.next;
        if index >= self.moves.len() {
            return None;
        }
        // A scan over the slice, without a bounds check per element: at
        // nodes where every move is tried this loop is among the search's
        // hottest (15% of `bench`'s time under perf before this form).
        let mut pick = index;
        let mut best = i32::MIN;
        for (j, &score) in self.scores[index..].iter().enumerate() {
            if score > best {
                best = score;
                pick = index + j;
            }
        }
        self.scores.swap(index, pick);
        self.moves.swap(index, pick);
        self.next += 1;
        Some((self.moves[index], self.scores[index]))
    }
}

impl Worker<'_> {
    /// How promising `mv` looks before searching it; higher goes first.
    pub(super) fn order_score(&self, pos: &Position, mv: Move, tt_move: Move, ply: usize) -> i32 {
        if mv == tt_move {
            return 1 << 30;
        }
        let victim = if mv.is_en_passant() {
            Some(Role::Pawn)
        } else {
            pos.role_at(mv.to())
        };
        match (victim, mv.promotion()) {
            (_, Some(role)) if role != Role::Queen => -(1 << 26),
            (None, None) => {
                if self.killers[ply][0] == mv {
                    (1 << 27) + 2
                } else if self.killers[ply][1] == mv {
                    (1 << 27) + 1
                } else {
                    let earlier = self.earlier(ply);
                    self.history
                        .quiet_score(pos.turn(), mv, earlier, PieceTo::of(pos, mv))
                }
            }
            (victim, promotion) => {
                let attacker = pos.role_at(mv.from()).map_or(0, |r| r.index() as i32);
                let gain = victim.map_or(0, |r| SEE_VALUE[r.index()])
                    + promotion.map_or(0, |r| SEE_VALUE[r.index()]);
                let mvv_lva = gain * 8 - attacker;
                if pos.see(mv) >= 0 {
                    (1 << 28) + mvv_lva
                } else {
                    -(1 << 25) + mvv_lva
                }
            }
        }
    }
}

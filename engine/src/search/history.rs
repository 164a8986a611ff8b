//! What a thread learns about quiet moves while it searches: which ones
//! caused cut-offs lately, so that they are tried earlier and reduced less.
//!
//! Two kinds of statistics, both raised for the quiet move that cut off a
//! node and lowered for the quiet moves tried before it there:
//!
//! - **Butterfly history**, `[colour][from][to]`: how good a move is in
//!   general, whatever came before.
//! - **Continuation history**, `[previous piece][previous to][piece][to]`:
//!   how good a move is as the answer to the move one ply earlier, and as
//!   the follow-up to our own move two plies earlier (one table serves both,
//!   as in Stockfish). It tells a reply to *this* threat from a move that
//!   is merely good on average.

use crate::moves::Move;
use crate::position::Position;
use crate::types::Color;

/// Every statistic saturates at this magnitude.
const HISTORY_MAX: i32 = 16_384;

/// A moved piece and where it went, as the continuation history indexes
/// it: `(colour × 6 + role) × 64 + to`. Null moves and the plies before
/// the root have none.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(super) struct PieceTo(u16);

impl PieceTo {
    pub(super) const NONE: PieceTo = PieceTo(u16::MAX);

    /// `mv`, about to be played in `pos`.
    #[inline]
    pub(super) fn of(pos: &Position, mv: Move) -> PieceTo {
        let role = pos.role_at(mv.from()).map_or(0, |r| r.index());
        PieceTo(((pos.turn().index() * 6 + role) * 64 + mv.to().index()) as u16)
    }

    fn index(self) -> Option<usize> {
        (self != PieceTo::NONE).then_some(self.0 as usize)
    }
}

const PIECE_TO: usize = 12 * 64;

/// One thread's statistics (the threads of a Lazy SMP search each order
/// their own tree, so each learns its own).
pub(super) struct Histories {
    butterfly: [[[i32; 64]; 64]; 2],
    /// `PIECE_TO × PIECE_TO` entries, indexed by the earlier move first.
    continuation: Box<[i16]>,
}

impl Histories {
    pub(super) fn new() -> Box<Histories> {
        Box::new(Histories {
            butterfly: [[[0; 64]; 64]; 2],
            continuation: vec![0; PIECE_TO * PIECE_TO].into_boxed_slice(),
        })
    }

    /// Forgets everything (a new game).
    pub(super) fn clear(&mut self) {
        self.butterfly
            .iter_mut()
            .flatten()
            .for_each(|row| row.fill(0));
        self.continuation.fill(0);
    }

    /// Halves everything at the start of a search: what the last move's
    /// search learnt still helps, but weighs less than what this one finds.
    pub(super) fn age(&mut self) {
        for h in self.butterfly.iter_mut().flatten().flatten() {
            *h /= 2;
        }
        for h in self.continuation.iter_mut() {
            *h /= 2;
        }
    }

    /// How good the quiet move `mv` of `us` has been lately, after the
    /// moves `earlier` (the previous ply's, then the one before).
    #[inline]
    pub(super) fn quiet_score(
        &self,
        us: Color,
        mv: Move,
        earlier: [PieceTo; 2],
        to: PieceTo,
    ) -> i32 {
        let mut score = self.butterfly[us.index()][mv.from().index()][mv.to().index()];
        for e in earlier.iter().filter_map(|e| e.index()) {
            score += self.continuation[e * PIECE_TO + to.0 as usize] as i32;
        }
        score
    }

    /// Moves the statistics of `mv` by `delta`, with "gravity": the closer
    /// to the cap, the smaller the step, so values stay bounded and recent
    /// results weigh more.
    pub(super) fn update(
        &mut self,
        us: Color,
        mv: Move,
        earlier: [PieceTo; 2],
        to: PieceTo,
        delta: i32,
    ) {
        let nudge = |h: i32| h + delta - h * delta.abs() / HISTORY_MAX;
        let b = &mut self.butterfly[us.index()][mv.from().index()][mv.to().index()];
        *b = nudge(*b);
        for e in earlier.iter().filter_map(|e| e.index()) {
            let c = &mut self.continuation[e * PIECE_TO + to.0 as usize];
            *c = nudge(*c as i32) as i16;
        }
    }
}

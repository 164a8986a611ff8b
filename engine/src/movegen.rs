//! Legal move generation.
//!
//! Generation is fully legal, never "pseudo-legal then test": before looping
//! over pieces we compute the checkers and the pinned pieces once, and every
//! target set is masked with them.
//!
//! - In double check only the king may move.
//! - In single check every other piece must capture the checker or block on
//!   a square between it and the king (the *check mask*).
//! - A pinned piece may only move along the line through its king and itself.
//! - The king may not step onto an attacked square; attacks are computed with
//!   the king itself removed from the board, so it cannot hide "behind itself"
//!   from a slider it is moving away from.
//! - En passant removes two pawns from a rank at once, which pin logic cannot
//!   see (the classic horizontal discovered check), so it is checked by
//!   replaying the occupancy change.
//!
//! Moves are produced in batches of one origin and a target set. Listing
//! expands them; counting only needs a popcount, which is what makes bulk
//! counting at the last perft ply cheap.

use arrayvec::ArrayVec;

use crate::attacks::{
    between, bishop_attacks, king_attacks, knight_attacks, line, pawn_attacks, rook_attacks,
};
use crate::bitboard::Bitboard;
use crate::moves::{Move, MoveKind};
use crate::position::Position;
use crate::types::{Color, Role, Square};

/// The most legal moves any chess position has is 218; 256 leaves room.
pub type MoveList = ArrayVec<Move, 256>;

/// A set of moves sharing an origin and kind.
#[derive(Clone, Copy)]
enum Batch {
    /// Ordinary moves from one square.
    Targets(Square, Bitboard),
    /// Pawn moves onto the last rank: four moves per target.
    Promotions(Square, Bitboard),
    /// Pawn moves from many origins: each target's origin is the target
    /// minus the shift (8 for a white push, -7 for a black capture, ...).
    PawnTargets(Bitboard, i8),
    /// The same, onto the last rank: four moves per target.
    PawnPromotions(Bitboard, i8),
    /// A single special move (castling, en passant).
    Single(Move),
}

impl Position {
    /// All legal moves.
    pub fn legal_moves(&self) -> MoveList {
        let mut list = MoveList::new();
        self.generate::<false>(|batch| expand(batch, &mut list));
        list
    }

    /// Legal captures, en-passant captures and promotions (quiescence search).
    pub fn legal_captures(&self) -> MoveList {
        let mut list = MoveList::new();
        self.generate::<true>(|batch| expand(batch, &mut list));
        list
    }

    /// The number of legal moves, without listing them.
    #[inline]
    pub fn count_legal_moves(&self) -> u64 {
        let mut count = 0u64;
        self.generate::<false>(|batch| {
            count += match batch {
                Batch::Targets(_, to) | Batch::PawnTargets(to, _) => to.count() as u64,
                Batch::Promotions(_, to) | Batch::PawnPromotions(to, _) => 4 * to.count() as u64,
                Batch::Single(_) => 1,
            }
        });
        count
    }

    /// True if the side to move has at least one legal move.
    pub fn has_legal_moves(&self) -> bool {
        // Generation is cheap enough that an early exit is not worth a
        // second code path.
        self.count_legal_moves() > 0
    }

    /// Our pieces that are pinned to our king by an enemy slider.
    #[inline(always)]
    fn pinned(&self, us: Color, king: Square) -> Bitboard {
        let them = !us;
        let theirs = self.by_color(them);
        let rooks = self.by_role(Role::Rook) | self.by_role(Role::Queen);
        let bishops = self.by_role(Role::Bishop) | self.by_role(Role::Queen);
        // Rays from the king that see through our own pieces find the
        // enemy sliders that could be pinning something ("snipers").
        let snipers = ((rook_attacks(king, theirs) & rooks)
            | (bishop_attacks(king, theirs) & bishops))
            & theirs;
        let occupied = self.occupied();
        let mut pinned = Bitboard::EMPTY;
        for sniper in snipers {
            let blockers = between(king, sniper) & occupied;
            if !blockers.more_than_one() {
                pinned |= blockers & self.by_color(us);
            }
        }
        pinned
    }

    // Always inlined: each caller is its only user (one closure each), and
    // perft's popcnt copy needs the counting compiled inside it.
    #[inline(always)]
    fn generate<const CAPTURES_ONLY: bool>(&self, mut emit: impl FnMut(Batch)) {
        let us = self.turn;
        let them = !us;
        let ours = self.by_color(us);
        let theirs = self.by_color(them);
        let occupied = ours | theirs;
        let king = self.king(us);
        let checkers = self.checkers_of(us, king, occupied);
        let targets = if CAPTURES_ONLY { theirs } else { !ours };

        // King moves: every square the enemy attacks with our king lifted
        // off the board, so that it cannot hide behind itself from a
        // slider it steps away from.
        let king_steps = king_attacks(king) & targets;
        let attacked = if king_steps.any() || (!CAPTURES_ONLY && self.castling.rook_files(us) != 0)
        {
            self.attacked_by(them, occupied ^ Bitboard::from_square(king))
        } else {
            Bitboard::EMPTY
        };
        emit(Batch::Targets(king, king_steps & !attacked));

        if checkers.more_than_one() {
            return;
        }
        let check_mask = match checkers.first() {
            Some(checker) => between(king, checker) | Bitboard::from_square(checker),
            None => Bitboard::ALL,
        };
        let pinned = self.pinned(us, king);
        let mask = targets & check_mask;

        // A pinned knight can never move: no knight move stays on a line.
        for from in self.pieces(us, Role::Knight) & !pinned {
            emit(Batch::Targets(from, knight_attacks(from) & mask));
        }
        let diagonal = (self.by_role(Role::Bishop) | self.by_role(Role::Queen)) & ours;
        for from in diagonal {
            let mut to = bishop_attacks(from, occupied) & mask;
            if pinned.contains(from) {
                to &= line(king, from);
            }
            emit(Batch::Targets(from, to));
        }
        let straight = (self.by_role(Role::Rook) | self.by_role(Role::Queen)) & ours;
        for from in straight {
            let mut to = rook_attacks(from, occupied) & mask;
            if pinned.contains(from) {
                to &= line(king, from);
            }
            emit(Batch::Targets(from, to));
        }

        self.generate_pawn_moves::<CAPTURES_ONLY>(king, pinned, check_mask, &mut emit);

        if !CAPTURES_ONLY && checkers.is_empty() {
            self.generate_castles(king, attacked, &mut emit);
        }
    }

    #[inline(always)]
    fn generate_pawn_moves<const CAPTURES_ONLY: bool>(
        &self,
        king: Square,
        pinned: Bitboard,
        check_mask: Bitboard,
        emit: &mut impl FnMut(Batch),
    ) {
        let us = self.turn;
        let them = !us;
        let theirs = self.by_color(them);
        let occupied = self.occupied();
        let empty = !occupied;
        let last_rank = Bitboard::rank(us.fold(7, 0));
        let double_push_rank = Bitboard::rank(us.fold(3, 4));
        let pawns = self.pieces(us, Role::Pawn);

        // Pinned pawns one by one: each may only move along its pin line.
        for from in pawns & pinned {
            let single = Bitboard::from_square(from).shift_forward(us) & empty;
            let double = single.shift_forward(us) & empty & double_push_rank;
            let mut pushes = single | double;
            if CAPTURES_ONLY {
                pushes &= last_rank;
            }
            let to = ((pawn_attacks(us, from) & theirs) | pushes) & check_mask & line(king, from);
            if (to & last_rank).any() {
                emit(Batch::Promotions(from, to));
            } else {
                emit(Batch::Targets(from, to));
            }
        }

        // All other pawns at once: shifting the whole set gives the targets
        // of every pawn in one direction, and a target's origin is the
        // target minus the shift. Counting such a batch is one popcount.
        let free = pawns & !pinned;
        let forward: i8 = us.fold(8, -8);
        let single = free.shift_forward(us) & empty;
        let double = (single & Bitboard::rank(us.fold(2, 5))).shift_forward(us) & empty;
        let not_a = !Bitboard::file(0);
        let not_h = !Bitboard::file(7);
        // Captures towards the a-file and towards the h-file.
        let (west, east) = match us {
            Color::White => (
                Bitboard((free & not_a).0 << 7),
                Bitboard((free & not_h).0 << 9),
            ),
            Color::Black => (
                Bitboard((free & not_a).0 >> 9),
                Bitboard((free & not_h).0 >> 7),
            ),
        };
        // `all`: also the moves that do not promote (captures-only
        // generation wants those for captures, not for pushes).
        let mut emit_shifted = |to: Bitboard, delta: i8, all: bool| {
            let to = to & check_mask;
            let promotions = to & last_rank;
            if promotions.any() {
                emit(Batch::PawnPromotions(promotions, delta));
            }
            if all {
                emit(Batch::PawnTargets(to & !last_rank, delta));
            }
        };
        emit_shifted(single, forward, !CAPTURES_ONLY);
        if !CAPTURES_ONLY {
            emit_shifted(double, 2 * forward, true);
        }
        emit_shifted(west & theirs, us.fold(7, -9), true);
        emit_shifted(east & theirs, us.fold(9, -7), true);

        if let Some(ep) = self.ep_square {
            let captured =
                Bitboard::from_square(Square::new((ep.index() as i32 + us.fold(-8, 8)) as u8));
            for from in pawn_attacks(them, ep) & self.pieces(us, Role::Pawn) {
                // Replay the capture on the occupancy and look for any
                // attack on our king that survives it.
                let after =
                    (occupied ^ Bitboard::from_square(from) ^ captured) | Bitboard::from_square(ep);
                let attackers = self.attackers_to(king, after) & theirs & !captured;
                if attackers.is_empty() {
                    emit(Batch::Single(Move::new(from, ep, MoveKind::EnPassant)));
                }
            }
        }
    }

    /// Castling, the Chess960 rule, of which the standard game is the
    /// case of a king on the e-file and rooks on the a- and h-files: the
    /// king lands on the g-file (king side) or c-file (queen side) and the
    /// rook beside it on the f- or d-file; every square either of them
    /// passes over or lands on must be empty but for the two of them, and
    /// no square the king stands on, crosses or lands on may be attacked.
    /// The caller has seen that the king is not in check, and gives the
    /// squares the enemy attacks with our king lifted off the board.
    #[inline(always)]
    fn generate_castles(&self, king: Square, attacked: Bitboard, emit: &mut impl FnMut(Batch)) {
        let us = self.turn;
        let mut files = self.castling.rook_files(us);
        if files == 0 {
            return;
        }
        let them = !us;
        let back = king.rank();
        let occupied = self.occupied();
        // From the h-file down: king side first, as the standard game's
        // generator always did (the search's move order depends on it).
        while files != 0 {
            let rook_file = 7 - files.leading_zeros() as u8;
            files ^= 1 << rook_file;
            let rook = Square::new(back * 8 + rook_file);
            let kingside = rook.file() > king.file();
            let (king_to, rook_to) = if kingside { (6, 5) } else { (2, 3) };
            let king_to = Square::new(back * 8 + king_to);
            let rook_to = Square::new(back * 8 + rook_to);
            let king_path = between(king, king_to) | Bitboard::from_square(king_to);
            let rook_path = between(rook, rook_to) | Bitboard::from_square(rook_to);
            // The two castling men are lifted off: each may pass over or
            // land on the other's square.
            let others = occupied ^ Bitboard::from_square(king) ^ Bitboard::from_square(rook);
            if ((king_path | rook_path) & others).any() {
                continue;
            }
            // Attacks are seen with both men lifted too: a rook standing
            // between an enemy rook and the king's target (king g1, rook b1,
            // enemy rook a1, castling queen side) shields it only until it
            // moves to d1. A rook in the corner shields nothing (no line
            // passes through a corner to another square of its rank), and
            // with the king not in check, lifting the king uncovers no
            // attack on its rank either: there the attacks with the king
            // lifted are the answer.
            let corner = rook_file == 0 || rook_file == 7;
            let mut path = king_path;
            let path_attacked = if corner {
                (king_path & attacked).any()
            } else {
                Iterator::any(&mut path, |sq| self.is_attacked(sq, them, others))
            };
            if path_attacked {
                continue;
            }
            emit(Batch::Single(Move::new(king, king_to, MoveKind::Castle)));
        }
    }
}

#[inline]
fn expand(batch: Batch, list: &mut MoveList) {
    match batch {
        Batch::Targets(from, to) => {
            for to in to {
                list.push(Move::normal(from, to));
            }
        }
        Batch::Promotions(from, to) => {
            for to in to {
                for role in Role::PROMOTIONS {
                    list.push(Move::new(from, to, MoveKind::Promotion(role)));
                }
            }
        }
        Batch::PawnTargets(to, delta) => {
            for to in to {
                list.push(Move::normal(pawn_origin(to, delta), to));
            }
        }
        Batch::PawnPromotions(to, delta) => {
            for to in to {
                let from = pawn_origin(to, delta);
                for role in Role::PROMOTIONS {
                    list.push(Move::new(from, to, MoveKind::Promotion(role)));
                }
            }
        }
        Batch::Single(mv) => list.push(mv),
    }
}

/// The origin of a pawn move found by shifting by `delta`.
#[inline]
fn pawn_origin(to: Square, delta: i8) -> Square {
    Square::new((to.index() as i8 - delta) as u8)
}

//! The position: piece placement, side to move, castling rights, en passant
//! and move counters, with an incrementally updated Zobrist hash.
//!
//! Moves are applied by copy-make: `Position` is 88 bytes of plain data, so a
//! search copies it and plays the move on the copy instead of keeping undo
//! information. Nothing to undo means nothing to get wrong, and the copy is a
//! few vector stores.
//!
//! Measured (`cargo bench -p rookery-engine --bench perft`): a copy costs
//! about 5 ns and the move itself about 10 ns, while perft with bulk counting
//! copies at only 3.6% of its leaf count (interior nodes), so copying is
//! about 6% of perft time: the most make/unmake could save, before paying
//! for its own undo step. Search copies at every node but spends far more
//! per node on evaluation and ordering than on the 88-byte copy.

use std::fmt;

use thiserror::Error;

use crate::attacks::{
    bishop_attacks, king_attacks, knight_attacks, pawn_attacks, pawn_attacks_of_set, piece_attacks,
    rook_attacks,
};
use crate::bitboard::Bitboard;
use crate::moves::{Move, MoveKind};
use crate::types::{Color, Piece, Role, Square};
use crate::zobrist;

/// Castling rights, kept by the rook that may castle: one bit per file of
/// each back rank, White's rank in the low byte and Black's in the high
/// byte. Chess960 puts the king and rooks on any files, so "king side" is
/// not a square; the rook's file is, and the side follows from the king's
/// file (a rook beyond the king's file castles king side, to the g-file).
/// The standard game is the case of rooks on the a- and h-files.
///
/// A right implies its rook on that square and the king on the same back
/// rank (FEN reading checks it; a move from or onto the rook's square, or
/// any king move, drops it), and at most one right on each side of a king.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, Default)]
pub struct CastlingRights(pub(crate) u16);

impl CastlingRights {
    /// The bits of [`Position::castling_sides`]: rights by side, as the
    /// standard game's FEN letters K, Q, k and q.
    pub const WHITE_KINGSIDE: u8 = 1;
    pub const WHITE_QUEENSIDE: u8 = 2;
    pub const BLACK_KINGSIDE: u8 = 4;
    pub const BLACK_QUEENSIDE: u8 = 8;
    pub const NONE: CastlingRights = CastlingRights(0);
    /// The standard game's four rights: rooks on a1, h1, a8 and h8.
    pub const ALL: CastlingRights = CastlingRights(0x8181);

    /// One bit per back-rank file (bit 0 the a-file): the files of
    /// `color`'s rooks that may castle.
    #[inline]
    pub const fn rook_files(self, color: Color) -> u8 {
        (self.0 >> (8 * color as u16)) as u8
    }

    /// The squares of every rook that may castle, of both colours.
    pub fn rooks(self) -> Bitboard {
        Bitboard((self.0 & 0xff) as u64 | ((self.0 >> 8) as u64) << 56)
    }

    /// May the rook on `sq` castle?
    pub fn has_rook(self, sq: Square) -> bool {
        self.rooks().contains(sq)
    }

    #[inline]
    pub const fn is_empty(self) -> bool {
        self.0 == 0
    }

    /// The right of the rook on `sq`, which must be on a back rank.
    pub(crate) fn with_rook(self, sq: Square) -> CastlingRights {
        CastlingRights(self.0 | rook_bit(sq))
    }
}

/// The bit of [`CastlingRights`] for a rook on `sq` (none off the back ranks).
const fn rook_bit(sq: Square) -> u16 {
    match sq.rank() {
        0 => 1 << sq.file(),
        7 => 1 << (8 + sq.file()),
        _ => 0,
    }
}

/// Which castling rights survive a move touching a square: moving from or
/// capturing on a rook's home square removes its right. (A king move
/// removes both of its side's, see `play_unchecked`.)
const fn castling_keep_masks() -> [u16; 64] {
    let mut masks = [0u16; 64];
    let mut i = 0;
    while i < 64 {
        masks[i] = !rook_bit(Square::new(i as u8));
        i += 1;
    }
    masks
}

static CASTLING_KEEP: [u16; 64] = castling_keep_masks();

/// How castling moves are spelled in UCI: the mode of a position (and of
/// the game it belongs to), carried from move to move.
///
/// The move itself is the same in both: [`Move`] holds the king's square
/// and the square it lands on (g or c file), and the rook comes from the
/// position's castling rights. Only the text differs.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, Default)]
pub enum CastlingMode {
    /// The king's two-square move (`e1g1`), as UCI spells castling in the
    /// standard game. Where the king and rook are not on standard squares
    /// (a Chess960 position read without saying so) that could be mistaken
    /// for a king step, so such castles are written king-takes-rook.
    #[default]
    Standard,
    /// King takes own rook (`e1h1`, `b1a1`), as UCI's `UCI_Chess960` asks:
    /// unambiguous wherever the king and rook stand.
    Chess960,
}

/// A move that is not legal in the position it was offered to.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[error("illegal move {mv} in {fen}")]
pub struct IllegalMoveError {
    pub mv: Move,
    pub fen: String,
}

/// A UCI move string that is malformed or not legal here.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum UciMoveError {
    #[error("not a UCI move: {0:?}")]
    Syntax(String),
    #[error("illegal move: {0}")]
    Illegal(String),
}

#[derive(Clone, PartialEq, Eq)]
pub struct Position {
    pub(crate) by_color: [Bitboard; 2],
    pub(crate) by_role: [Bitboard; 6],
    pub(crate) turn: Color,
    pub(crate) castling: CastlingRights,
    /// How castling moves are written and read in UCI (not part of the
    /// position's identity for repetitions: the hash leaves it out).
    pub(crate) castling_mode: CastlingMode,
    /// Set only when the side to move has a legal en-passant capture, so that
    /// the hash and FEN of equal positions are equal (FIDE repetition rule).
    pub(crate) ep_square: Option<Square>,
    pub(crate) halfmove_clock: u32,
    pub(crate) fullmove_number: u32,
    pub(crate) hash: u64,
}

impl Default for Position {
    fn default() -> Position {
        Position::startpos()
    }
}

impl Position {
    /// The standard starting position.
    pub fn startpos() -> Position {
        Position::from_fen(crate::fen::STARTPOS).expect("the start position is valid")
    }

    /// An empty board, for building positions piece by piece (FEN parsing).
    pub(crate) fn empty() -> Position {
        Position {
            by_color: [Bitboard::EMPTY; 2],
            by_role: [Bitboard::EMPTY; 6],
            turn: Color::White,
            castling: CastlingRights::NONE,
            castling_mode: CastlingMode::Standard,
            ep_square: None,
            halfmove_clock: 0,
            fullmove_number: 1,
            hash: 0,
        }
    }

    #[inline]
    pub fn turn(&self) -> Color {
        self.turn
    }

    #[inline]
    pub fn castling_rights(&self) -> CastlingRights {
        self.castling
    }

    /// How this position writes and reads castling moves in UCI.
    #[inline]
    pub fn castling_mode(&self) -> CastlingMode {
        self.castling_mode
    }

    /// Sets how castling moves are written and read in UCI; positions
    /// played from this one keep it.
    pub fn set_castling_mode(&mut self, mode: CastlingMode) {
        self.castling_mode = mode;
    }

    /// This position in `mode` (see [`Position::set_castling_mode`]).
    pub fn with_castling_mode(mut self, mode: CastlingMode) -> Position {
        self.castling_mode = mode;
        self
    }

    /// Is castling written king-takes-rook (Chess960)?
    #[inline]
    pub fn is_chess960(&self) -> bool {
        self.castling_mode == CastlingMode::Chess960
    }

    /// The rook with which `color` may castle on the king side (`true`,
    /// landing on the f-file) or the queen side (landing on the d-file).
    #[inline]
    pub fn castling_rook(&self, color: Color, kingside: bool) -> Option<Square> {
        let files = self.castling.rook_files(color);
        if files == 0 {
            return None;
        }
        let king_file = self.king(color).file();
        let side = if kingside {
            files & !((2u16 << king_file) - 1) as u8
        } else {
            files & ((1u16 << king_file) - 1) as u8
        };
        if side == 0 {
            return None;
        }
        Square::from_coords(side.trailing_zeros() as u8, color.fold(0, 7))
    }

    /// May `color` castle on that side (given the pieces, not the attacks)?
    pub fn has_castling_right(&self, color: Color, kingside: bool) -> bool {
        self.castling_rook(color, kingside).is_some()
    }

    /// The rights by side, as four bits ([`CastlingRights::WHITE_KINGSIDE`]
    /// and the others): the standard game's K, Q, k and q.
    pub fn castling_sides(&self) -> u8 {
        let mut bits = 0;
        for (color, kingside, bit) in [
            (Color::White, true, CastlingRights::WHITE_KINGSIDE),
            (Color::White, false, CastlingRights::WHITE_QUEENSIDE),
            (Color::Black, true, CastlingRights::BLACK_KINGSIDE),
            (Color::Black, false, CastlingRights::BLACK_QUEENSIDE),
        ] {
            if self.has_castling_right(color, kingside) {
                bits |= bit;
            }
        }
        bits
    }

    /// Where the rook of the castling move `mv` (legal here) starts and
    /// lands: the king lands on the g- or c-file, the rook beside it on the
    /// f- or d-file. `None` if `mv` is not a castling move.
    #[inline]
    pub fn castling_rook_squares(&self, mv: Move) -> Option<(Square, Square)> {
        if !mv.is_castle() {
            return None;
        }
        let kingside = mv.to().file() == 6;
        let rook = self.castling_rook(self.turn, kingside)?;
        let rook_to = Square::from_coords(if kingside { 5 } else { 3 }, rook.rank())?;
        Some((rook, rook_to))
    }

    /// The en-passant target square, if a legal en-passant capture exists.
    #[inline]
    pub fn ep_square(&self) -> Option<Square> {
        self.ep_square
    }

    /// Half-moves since the last capture or pawn move (fifty-move rule).
    #[inline]
    pub fn halfmove_clock(&self) -> u32 {
        self.halfmove_clock
    }

    #[inline]
    pub fn fullmove_number(&self) -> u32 {
        self.fullmove_number
    }

    /// Zobrist hash of the position (placement, side, castling, en passant).
    #[inline]
    pub fn hash(&self) -> u64 {
        self.hash
    }

    #[inline]
    pub fn occupied(&self) -> Bitboard {
        self.by_color[0] | self.by_color[1]
    }

    #[inline]
    pub fn by_color(&self, color: Color) -> Bitboard {
        self.by_color[color.index()]
    }

    #[inline]
    pub fn by_role(&self, role: Role) -> Bitboard {
        self.by_role[role.index()]
    }

    #[inline]
    pub fn pieces(&self, color: Color, role: Role) -> Bitboard {
        self.by_color[color.index()] & self.by_role[role.index()]
    }

    #[inline]
    pub fn king(&self, color: Color) -> Square {
        // Every Position holds exactly one king per colour (FEN validation
        // guarantees it and legal moves never capture a king).
        self.pieces(color, Role::King).first().unwrap_or(Square::A1)
    }

    #[inline]
    pub fn role_at(&self, sq: Square) -> Option<Role> {
        if !self.occupied().contains(sq) {
            return None;
        }
        Role::ALL
            .into_iter()
            .find(|role| self.by_role[role.index()].contains(sq))
    }

    #[inline]
    pub fn color_at(&self, sq: Square) -> Option<Color> {
        if self.by_color[0].contains(sq) {
            Some(Color::White)
        } else if self.by_color[1].contains(sq) {
            Some(Color::Black)
        } else {
            None
        }
    }

    pub fn piece_at(&self, sq: Square) -> Option<Piece> {
        Some(Piece::new(self.color_at(sq)?, self.role_at(sq)?))
    }

    /// Pieces of both colours attacking `sq`, with `occupied` as blockers.
    #[inline]
    pub fn attackers_to(&self, sq: Square, occupied: Bitboard) -> Bitboard {
        let rooks = self.by_role(Role::Rook) | self.by_role(Role::Queen);
        let bishops = self.by_role(Role::Bishop) | self.by_role(Role::Queen);
        (pawn_attacks(Color::White, sq) & self.pieces(Color::Black, Role::Pawn))
            | (pawn_attacks(Color::Black, sq) & self.pieces(Color::White, Role::Pawn))
            | (knight_attacks(sq) & self.by_role(Role::Knight))
            | (king_attacks(sq) & self.by_role(Role::King))
            | (rook_attacks(sq, occupied) & rooks)
            | (bishop_attacks(sq, occupied) & bishops)
    }

    /// Is `sq` attacked by any piece of `by`, with `occupied` as blockers?
    #[inline]
    pub fn is_attacked(&self, sq: Square, by: Color, occupied: Bitboard) -> bool {
        // Cheapest tests first, and stop at the first attacker: the move
        // generator asks this for every square the king might step to.
        let theirs = self.by_color(by);
        let rooks = (self.by_role(Role::Rook) | self.by_role(Role::Queen)) & theirs;
        let bishops = (self.by_role(Role::Bishop) | self.by_role(Role::Queen)) & theirs;
        (pawn_attacks(!by, sq) & self.by_role(Role::Pawn) & theirs).any()
            || (knight_attacks(sq) & self.by_role(Role::Knight) & theirs).any()
            || (king_attacks(sq) & self.by_role(Role::King) & theirs).any()
            || (rooks.any() && (rook_attacks(sq, occupied) & rooks).any())
            || (bishops.any() && (bishop_attacks(sq, occupied) & bishops).any())
    }

    /// Every square a man of `by` attacks, with `occupied` as blockers.
    /// The move generator asks it once, with the moving side's king lifted
    /// off the board, instead of testing each square the king might step
    /// to: one lookup per enemy man against up to eight tests of every kind.
    #[inline(always)]
    pub(crate) fn attacked_by(&self, by: Color, occupied: Bitboard) -> Bitboard {
        let theirs = self.by_color(by);
        let mut attacked = pawn_attacks_of_set(by, self.by_role(Role::Pawn) & theirs);
        for sq in self.by_role(Role::Knight) & theirs {
            attacked |= knight_attacks(sq);
        }
        let queens = self.by_role(Role::Queen);
        for sq in (self.by_role(Role::Bishop) | queens) & theirs {
            attacked |= bishop_attacks(sq, occupied);
        }
        for sq in (self.by_role(Role::Rook) | queens) & theirs {
            attacked |= rook_attacks(sq, occupied);
        }
        attacked | king_attacks(self.king(by))
    }

    /// Enemy pieces giving check to the side to move.
    #[inline]
    pub fn checkers(&self) -> Bitboard {
        self.checkers_of(self.turn, self.king(self.turn), self.occupied())
    }

    /// Pieces of `!us` attacking `us`'s king on `king`. Narrower than
    /// [`Position::attackers_to`]: one colour, and no king (a king never
    /// gives check), which matters because every move generation asks it.
    #[inline]
    pub(crate) fn checkers_of(&self, us: Color, king: Square, occupied: Bitboard) -> Bitboard {
        let theirs = self.by_color(!us);
        let rooks = self.by_role(Role::Rook) | self.by_role(Role::Queen);
        let bishops = self.by_role(Role::Bishop) | self.by_role(Role::Queen);
        ((pawn_attacks(us, king) & self.by_role(Role::Pawn))
            | (knight_attacks(king) & self.by_role(Role::Knight))
            | (rook_attacks(king, occupied) & rooks)
            | (bishop_attacks(king, occupied) & bishops))
            & theirs
    }

    #[inline]
    pub fn is_check(&self) -> bool {
        self.checkers().any()
    }

    /// Does `mv`, legal here, give check? Answered without playing it, so
    /// the search can decide what to prune before paying for the move: the
    /// moved piece attacks the king from its new square (as what it
    /// promotes to), or leaving its square (or an en passant capture)
    /// uncovers one of our sliders. Castling, where the rook gives any
    /// check, is played out.
    pub fn gives_check(&self, mv: Move) -> bool {
        if mv.is_castle() {
            let mut child = self.clone();
            child.play_unchecked(mv);
            return child.is_check();
        }
        let us = self.turn;
        let king = self.king(!us);
        let (from, to) = (mv.from(), mv.to());
        let Some(moved) = self.role_at(from) else {
            return false;
        };
        let role = mv.promotion().unwrap_or(moved);
        let mut occupied = self.occupied().without(from).with(to);
        if mv.is_en_passant() {
            if let Some(taken) = Square::from_coords(to.file(), from.rank()) {
                occupied = occupied.without(taken);
            }
        }
        if piece_attacks(role, us, to, occupied).contains(king) {
            return true;
        }
        let ours = self.by_color(us).without(from);
        let rooks = (self.by_role(Role::Rook) | self.by_role(Role::Queen)) & ours;
        let bishops = (self.by_role(Role::Bishop) | self.by_role(Role::Queen)) & ours;
        (rook_attacks(king, occupied) & rooks).any()
            || (bishop_attacks(king, occupied) & bishops).any()
    }

    #[inline]
    pub(crate) fn put(&mut self, piece: Piece, sq: Square) {
        let bb = Bitboard::from_square(sq);
        self.by_color[piece.color.index()] |= bb;
        self.by_role[piece.role.index()] |= bb;
        self.hash ^= zobrist::piece(piece.color, piece.role, sq);
    }

    #[inline]
    fn remove(&mut self, piece: Piece, sq: Square) {
        let bb = Bitboard::from_square(sq);
        self.by_color[piece.color.index()] ^= bb;
        self.by_role[piece.role.index()] ^= bb;
        self.hash ^= zobrist::piece(piece.color, piece.role, sq);
    }

    /// Plays `mv`, which must be legal in this position (from
    /// [`Position::legal_moves`]); the hot path of search and perft.
    /// Use [`Position::play`] for moves from outside.
    pub fn play_unchecked(&mut self, mv: Move) {
        let us = self.turn;
        let them = !us;
        let from = mv.from();
        let to = mv.to();
        let moved = self.role_at(from).unwrap_or(Role::Pawn);

        if let Some(ep) = self.ep_square.take() {
            self.hash ^= zobrist::en_passant(ep);
        }
        // Saturating: a FEN may start the counters anywhere in u32 (see
        // `from_fen`), and a stuck counter is harmless where a panic is not.
        self.halfmove_clock = self.halfmove_clock.saturating_add(1);

        match mv.kind() {
            MoveKind::Normal | MoveKind::Promotion(_) => {
                if let Some(captured) = self.role_at(to) {
                    self.remove(Piece::new(them, captured), to);
                    self.halfmove_clock = 0;
                }
                self.remove(Piece::new(us, moved), from);
                let placed = mv.promotion().unwrap_or(moved);
                self.put(Piece::new(us, placed), to);
                if moved == Role::Pawn {
                    self.halfmove_clock = 0;
                }
            }
            MoveKind::EnPassant => {
                let captured_sq = Square::from_coords(to.file(), from.rank()).unwrap_or(to);
                self.remove(Piece::new(them, Role::Pawn), captured_sq);
                self.remove(Piece::new(us, Role::Pawn), from);
                self.put(Piece::new(us, Role::Pawn), to);
                self.halfmove_clock = 0;
            }
            MoveKind::Castle => {
                // Both men off, then both on: in Chess960 the king or the
                // rook may land where the other stood (or stay put).
                let (rook_from, rook_to) = self.castling_rook_squares(mv).unwrap_or((from, from));
                self.remove(Piece::new(us, Role::King), from);
                self.remove(Piece::new(us, Role::Rook), rook_from);
                self.put(Piece::new(us, Role::King), to);
                self.put(Piece::new(us, Role::Rook), rook_to);
            }
        }

        if !self.castling.is_empty() {
            let mut rights =
                self.castling.0 & CASTLING_KEEP[from.index()] & CASTLING_KEEP[to.index()];
            if moved == Role::King {
                rights &= us.fold(0xff00, 0x00ff);
            }
            if rights != self.castling.0 {
                self.hash ^= zobrist::castling(self.castling.0) ^ zobrist::castling(rights);
                self.castling = CastlingRights(rights);
            }
        }

        if us == Color::Black {
            self.fullmove_number = self.fullmove_number.saturating_add(1);
        }
        self.turn = them;
        self.hash ^= zobrist::black_to_move();

        if moved == Role::Pawn && from.rank().abs_diff(to.rank()) == 2 {
            let ep =
                Square::from_coords(from.file(), (from.rank() + to.rank()) / 2).unwrap_or(from);
            self.set_ep_if_capturable(ep);
        }
    }

    /// Records `ep` as the en-passant square if the side to move has a legal
    /// capture onto it. A pseudo-legal capture is not enough: a pawn pinned
    /// to its king, or an en-passant capture that would uncover a rank attack
    /// on the king once both pawns leave the rank, does not count (FIDE 9.2:
    /// positions are equal when the same moves are possible).
    pub(crate) fn set_ep_if_capturable(&mut self, ep: Square) {
        let us = self.turn;
        let them = !us;
        let candidates = pawn_attacks(them, ep) & self.pieces(us, Role::Pawn);
        if candidates.is_empty() {
            return;
        }
        let pushed = match ep.offset(0, us.fold(-1, 1)) {
            Some(sq) => sq,
            None => return,
        };
        let king = self.king(us);
        for from in candidates {
            let occupied =
                (self.occupied() ^ Bitboard::from_square(from) ^ Bitboard::from_square(pushed))
                    | Bitboard::from_square(ep);
            let attackers = self.attackers_to(king, occupied)
                & self.by_color(them)
                & !Bitboard::from_square(pushed);
            if attackers.is_empty() {
                self.ep_square = Some(ep);
                self.hash ^= zobrist::en_passant(ep);
                return;
            }
        }
    }

    /// Plays `mv` if it is legal here, returning the new position.
    pub fn play(&self, mv: Move) -> Result<Position, IllegalMoveError> {
        if !self.is_legal(mv) {
            return Err(IllegalMoveError {
                mv,
                fen: self.to_fen(),
            });
        }
        let mut next = self.clone();
        next.play_unchecked(mv);
        Ok(next)
    }

    /// Is `mv` one of the legal moves here?
    pub fn is_legal(&self, mv: Move) -> bool {
        !mv.is_none() && self.legal_moves().contains(&mv)
    }

    /// Finds the legal move written in UCI notation (`e2e4`, `e7e8q`, `e1g1`).
    ///
    /// Castling is read in either spelling, whatever the castling mode:
    /// king takes own rook (`e1h1`, Chess960's; never any other move), or
    /// the king's move to its target square (`e1g1`, the standard game's),
    /// which in a Chess960 position can also be a plain king step (king
    /// f1, rook h1: `f1g1`); the king step is then what it means, and the
    /// castle is `f1h1`.
    pub fn parse_uci(&self, text: &str) -> Result<Move, UciMoveError> {
        let syntax = || UciMoveError::Syntax(crate::text::excerpt(text));
        if !text.is_ascii() || !(4..=5).contains(&text.len()) {
            return Err(syntax());
        }
        let from = Square::from_name(&text[0..2]).ok_or_else(syntax)?;
        let to = Square::from_name(&text[2..4]).ok_or_else(syntax)?;
        let promotion = match text.as_bytes().get(4) {
            None => None,
            Some(&c) => match Role::from_char(c as char) {
                Some(role) if c.is_ascii_lowercase() && Role::PROMOTIONS.contains(&role) => {
                    Some(role)
                }
                _ => return Err(syntax()),
            },
        };
        let legal = self.legal_moves();
        let plain = legal.iter().find(|m| {
            !m.is_castle() && m.from() == from && m.to() == to && m.promotion() == promotion
        });
        let castle = || {
            legal.iter().find(|&&m| {
                m.is_castle()
                    && m.from() == from
                    && promotion.is_none()
                    && (m.to() == to
                        || self
                            .castling_rook_squares(m)
                            .is_some_and(|(rook, _)| rook == to))
            })
        };
        plain
            .or_else(castle)
            .copied()
            .ok_or_else(|| UciMoveError::Illegal(text.to_string()))
    }

    /// The UCI spelling of `mv` (legal here) in this position's castling
    /// mode: as [`Move::to_uci`] but for castling, which is king takes own
    /// rook in [`CastlingMode::Chess960`], and in [`CastlingMode::Standard`]
    /// the king's two-square move where king and rook stand on the
    /// standard squares (`e1g1`), king takes rook elsewhere. [`parse_uci`]
    /// reads back what this writes, in either mode.
    ///
    /// [`parse_uci`]: Position::parse_uci
    pub fn uci(&self, mv: Move) -> String {
        match self.castling_rook_squares(mv) {
            Some((rook, _))
                if self.castling_mode == CastlingMode::Chess960
                    || mv.from().file() != 4
                    || !matches!(rook.file(), 0 | 7) =>
            {
                format!("{}{}", mv.from(), rook)
            }
            _ => mv.to_uci(),
        }
    }

    /// Recomputes the hash from scratch (for checking the incremental one).
    pub fn compute_hash(&self) -> u64 {
        let mut hash = 0;
        for sq in self.occupied() {
            if let Some(piece) = self.piece_at(sq) {
                hash ^= zobrist::piece(piece.color, piece.role, sq);
            }
        }
        hash ^= zobrist::castling(self.castling.0);
        if let Some(ep) = self.ep_square {
            hash ^= zobrist::en_passant(ep);
        }
        if self.turn == Color::Black {
            hash ^= zobrist::black_to_move();
        }
        hash
    }
}

/// Rules about the material on the board.
impl Position {
    /// Can `color` never checkmate, whatever either side plays?
    ///
    /// This follows the usual engine rule (the one lichess applies to decide
    /// timeouts): pawns, rooks and queens can always mate. A lone knight can
    /// mate only if the opponent has pieces that can block its own king in
    /// (anything but a queen). Bishops can mate only with help: bishops on
    /// both colours, or an enemy pawn or knight to block with (an enemy
    /// bishop on the other colour counts too, since then the bishops are not
    /// all on one colour).
    pub fn has_insufficient_material(&self, color: Color) -> bool {
        let ours = self.by_color(color);
        let theirs = self.by_color(!color);
        if (ours
            & (self.by_role(Role::Pawn) | self.by_role(Role::Rook) | self.by_role(Role::Queen)))
        .any()
        {
            return false;
        }
        if (ours & self.by_role(Role::Knight)).any() {
            // King and exactly one knight, against a king alone or with
            // queens: with any other enemy piece (or pawn) the lone knight
            // could mate a king hemmed in by its own men; two knights can
            // mate with the opponent's help.
            return ours.count() <= 2
                && (theirs & !self.by_role(Role::King) & !self.by_role(Role::Queen)).is_empty();
        }
        if (ours & self.by_role(Role::Bishop)).any() {
            let bishops = self.by_role(Role::Bishop);
            let one_colour = (bishops & Bitboard::DARK_SQUARES).is_empty()
                || (bishops & Bitboard::LIGHT_SQUARES).is_empty();
            return one_colour
                && self.by_role(Role::Pawn).is_empty()
                && self.by_role(Role::Knight).is_empty();
        }
        true
    }

    /// Is this a dead position by material alone: can neither side ever
    /// checkmate? K v K, K+minor v K, and kings with bishops all on squares
    /// of one colour.
    pub fn is_insufficient_material(&self) -> bool {
        self.has_insufficient_material(Color::White) && self.has_insufficient_material(Color::Black)
    }

    /// The position with the side to move passing its turn: the search's
    /// null-move pruning asks "what if I could skip a move?". Never called
    /// when in check (passing would leave the king capturable).
    pub(crate) fn null_move(&self) -> Position {
        let mut next = self.clone();
        if let Some(ep) = next.ep_square.take() {
            next.hash ^= zobrist::en_passant(ep);
        }
        next.turn = !next.turn;
        next.hash ^= zobrist::black_to_move();
        next.halfmove_clock = next.halfmove_clock.saturating_add(1);
        next
    }

    /// Does the side to move have pieces other than pawns and the king?
    /// Null-move pruning assumes passing is never the best move, which is
    /// false in pawn endgames (zugzwang), so it is skipped there.
    pub(crate) fn has_non_pawn_material(&self) -> bool {
        let us = self.by_color(self.turn());
        (us & !(self.by_role(Role::Pawn) | self.by_role(Role::King))).any()
    }
}

impl fmt::Debug for Position {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Position({})", self.to_fen())
    }
}

impl fmt::Display for Position {
    /// The board as text, rank 8 on top, then the FEN.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for rank in (0..8).rev() {
            for file in 0..8 {
                let sq = Square::new(rank * 8 + file);
                let c = self.piece_at(sq).map_or('.', Piece::fen_char);
                write!(f, "{c}")?;
            }
            writeln!(f)?;
        }
        write!(f, "{}", self.to_fen())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pos(fen: &str) -> Position {
        Position::from_fen(fen).expect("valid test FEN")
    }

    #[test]
    fn insufficient_material() {
        let dead = [
            "4k3/8/8/8/8/8/8/4K3 w - - 0 1",
            "4k3/8/8/8/8/8/8/2B1K3 w - - 0 1",
            "4k3/8/8/8/8/8/8/1N2K3 b - - 0 1",
            "2b1k3/8/8/8/8/8/8/3BK3 w - - 0 1",
        ];
        for fen in dead {
            assert!(pos(fen).is_insufficient_material(), "{fen}");
        }
        let alive = [
            "4k3/8/8/8/8/8/8/2B1KB2 w - - 0 1",
            "4k3/8/8/8/8/8/8/1NN1K3 w - - 0 1",
            "1b2k3/8/8/8/8/8/8/3BK3 w - - 0 1",
            "4k3/7p/8/8/8/8/8/4K3 w - - 0 1",
            "4k3/8/8/8/8/8/8/R3K3 w - - 0 1",
            "n3k3/8/8/8/8/8/8/1N2K3 w - - 0 1",
        ];
        for fen in alive {
            assert!(!pos(fen).is_insufficient_material(), "{fen}");
        }
        // One side only: a knight against a rook could still mate (the rook
        // blocks its own king), a knight against a queen cannot.
        let p = pos("r3k3/8/8/8/8/8/8/1N2K3 w - - 0 1");
        assert!(!p.has_insufficient_material(Color::White));
        assert!(!p.has_insufficient_material(Color::Black));
        let p = pos("q3k3/8/8/8/8/8/8/1N2K3 w - - 0 1");
        assert!(p.has_insufficient_material(Color::White));
    }
}
